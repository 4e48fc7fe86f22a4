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
	p atomic.Pointer[revision]
}

// revision is a record's revision.
type revision struct {
	incarnation string
	version     uint64
}

// Seen is what a Last held when a read began.
type Seen struct{ r *revision }

// Begin returns what l holds now, for a read that begins: the read's
// record is judged against it (Older), not against what other reads see
// while it is in flight.
func (l *Last) Begin() Seen { return Seen{l.p.Load()} }

// Saw records rec, read from or written to the server: a revision of the
// record the server held.
func (l *Last) Saw(rec *driver.Record) {
	if rec == nil {
		return
	}
	cur := l.p.Load()
	if cur != nil && cur.incarnation == rec.Incarnation && cur.version >= rec.Version {
		return
	}
	l.p.Store(&revision{rec.Incarnation, rec.Version})
}

// Older reports whether rec, read by a read that began when l held s, is
// older than the revision of the same incarnation seen before it began:
// versions only grow within an incarnation, so the server's record was
// rolled back.
func Older(rec *driver.Record, s Seen) bool {
	return rec != nil && s.r != nil && s.r.incarnation == rec.Incarnation && rec.Version < s.r.version
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
