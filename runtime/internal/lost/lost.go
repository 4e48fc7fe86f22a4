// Package lost is what a distributed store does when it finds that its
// server lost a circuit's state: it remembers the latest revision of each
// circuit's record it saw, tells a record older than that (a dataset
// rolled back: a restore from a backup, a failover to a replica that had
// not caught up), and builds the record that stands for a circuit whose
// state is unknown.
package lost

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Last remembers the latest revision of one circuit's record that a
// process saw. It is safe for concurrent use.
type Last struct {
	p atomic.Pointer[driver.Record] // records are immutable: its revision, and when it was written
}

// Seen is what a Last held when a read began.
type Seen struct{ r *driver.Record }

// Begin returns what l holds now, for a read that begins: the read's
// record is judged against it (Older), not against what other reads see
// while it is in flight.
func (l *Last) Begin() Seen { return Seen{l.p.Load()} }

// Saw records rec, read from or written to the server: a revision of the
// record the server held. A record of another incarnation replaces the one
// held whenever it was written: one the store took (not Older, or open),
// or wrote (lost.Unknown), is what later reads are judged against, so a
// server clock stepped back makes at most one record of each circuit pass
// for older.
func (l *Last) Saw(rec *driver.Record) {
	if rec == nil {
		return
	}
	cur := l.p.Load()
	if cur != nil && cur.Incarnation == rec.Incarnation && cur.Version >= rec.Version {
		return
	}
	l.p.Store(rec) // the record a copy holds too, or soon garbage: no copy of its revision
}

// Older reports whether rec, read by a read that began when l held s, is
// older than the revision seen before it began: versions only grow within
// an incarnation, and a record of another incarnation was made after the
// Clear that ended the one seen, so it was written later than the revision
// seen. Either way older, the server's record was rolled back: to an
// earlier version, or to a record of an incarnation cleared before the one
// seen began. A record of another incarnation is judged by the server's
// clock (UpdatedAt): a clock stepped back across a Clear makes the new
// record pass for older, and the circuit probes once before it admits
// calls.
func Older(rec *driver.Record, s Seen) bool {
	if rec == nil || s.r == nil {
		return false
	}
	if s.r.Incarnation == rec.Incarnation {
		return rec.Version < s.r.Version
	}
	return rec.UpdatedAt.Before(s.r.UpdatedAt)
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

// ErrLostAgain is returned by MakeUnknown when the record was lost again
// each time it was made unknown.
var ErrLostAgain = errors.New("the record was lost again each time it was made unknown")

// MakeUnknown replaces found, the record a read found lost (nil: none)
// at the server's time now, with Unknown of a fresh incarnation, through
// replace (which returns driver.ErrConflict when the stored record is not
// prev), unless another process wrote first. It returns the record it
// wrote, or the one read anew (read: the record, the server's time, and
// whether it is gone without a Clear) after another process's write. A
// record lost again meanwhile (gone, or rolled back, before the read anew,
// as under an eviction storm) is made unknown again, up to three times, and
// is never returned as no record: that would admit calls as closed. last
// is told of what it returns.
func MakeUnknown(name string, now time.Time, found *driver.Record, last *Last, incarnation func() string,
	replace func(prev, next *driver.Record) error,
	read func() (rec *driver.Record, now time.Time, gone bool, err error)) (*driver.Record, time.Time, error) {
	for range 3 {
		u := Unknown(name, now, incarnation())
		err := replace(found, u)
		if err == nil {
			last.Saw(u)
			return u, now, nil
		}
		if !errors.Is(err, driver.ErrConflict) {
			return nil, now, err
		}
		seen := last.Begin()
		rec, at, gone, err := read()
		switch {
		case err != nil:
			return nil, at, err
		case gone: // lost again
			found, now = nil, at
		case rec != nil && rec.State == driver.StateClosed && Older(rec, seen): // rolled back again
			found, now = rec, at
		default: // another process's write: its Unknown, a probe's, or a Clear's
			last.Saw(rec)
			return rec, at, nil
		}
	}
	return nil, now, ErrLostAgain
}
