// Package lost is what a distributed store does when it finds that its
// server lost a circuit's state: it remembers the latest revision of each
// circuit's record it saw, tells a record older than that (a dataset
// rolled back: a restore from a backup, a failover to a replica that had
// not caught up), and builds the record that stands for a circuit whose
// state is unknown.
package lost

import (
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Last remembers the latest revision of one circuit's record that a
// process saw. It is safe for concurrent use.
type Last struct {
	p      atomic.Pointer[revision]
	origin time.Time
}

// revision is a record's revision, and when the read or write that saw it
// returned (Clock).
type revision struct {
	incarnation string
	version     uint64
	at          int64
}

// NewLast returns a Last that has seen nothing.
func NewLast() *Last { return &Last{origin: time.Now()} }

// Clock reads the monotonic clock of Saw and Older: a read's begin.
func (l *Last) Clock() int64 { return int64(time.Since(l.origin)) }

// Saw records rec, read or written by an operation that returned now: a
// revision of the record the server held.
func (l *Last) Saw(rec *driver.Record) {
	if rec == nil {
		return
	}
	cur := l.p.Load()
	if cur != nil && cur.incarnation == rec.Incarnation && cur.version >= rec.Version {
		return
	}
	l.p.Store(&revision{rec.Incarnation, rec.Version, l.Clock()})
}

// Older reports whether rec, read by a read that began at begin (Clock), is
// older than a revision of the same incarnation seen before that read
// began: versions only grow within an incarnation, so the server's record
// was rolled back. A read that began before the newer revision was seen
// may return an older one, and is not judged.
func (l *Last) Older(rec *driver.Record, begin int64) bool {
	cur := l.p.Load()
	return rec != nil && cur != nil && cur.at < begin && cur.incarnation == rec.Incarnation && rec.Version < cur.version
}

// Unknown returns the record that stands for the named circuit when its
// state was lost, at the server's time now: open with its cooldown already
// over, so that the next call anywhere claims the half-open probe (one at a
// time) and the circuit closes again only when a probe succeeds; its
// incarnation, fresh, fences every call admitted before.
func Unknown(name string, now time.Time, incarnation string) *driver.Record {
	return &driver.Record{
		Name: name, State: driver.StateOpen, Generation: 1, Incarnation: incarnation, Version: 1,
		OpenUntil: now, UpdatedAt: now,
	}
}
