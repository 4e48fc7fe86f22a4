package filestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/lost"
)

// A record file changed behind the store's back is a loss of the circuit's
// state: the store does not know what the record said, and treats the
// circuit as unknown, never as closed. A read of the file (Load's slow path)
// finds the record lost when:
//
//   - the file is gone, though no Delete (a Clear) removed it: the circuit's
//     slot in the change index holds the mark of a record (index.go), or
//     this process last read or wrote a record and the index does not say
//     the record was cleared (its circuit has no slot of its own, or the
//     index is another than the one the record was seen under: the state
//     directory was removed, or replaced by an empty one), or says so but is
//     another index than the one this process last saw the record under
//     (the directory replaced by a copy taken after a Clear; a Clear made
//     after the directory was replaced or its index remade then counts as
//     a loss, and the circuit probes once);
//   - the file holds a closed record older than the one the slot's mark
//     names, of the same incarnation, or of another incarnation than the
//     mark's (behind), or older than one this process saw (lost.Older): an
//     older copy was put back, one from before a Clear included, or the
//     directory replaced by an older copy of itself.
//
// The first process to find it writes lost.Unknown over what it found
// (open with its cooldown already over, of a fresh incarnation: the next
// call anywhere claims the half-open probe, one at a time, and the circuit
// closes again only when a probe succeeds), unless another process wrote
// first, and reports the loss (driver.ErrLost) through Notify. Every other
// process then reads that record, by the change its write made.
//
// A process holding a copy of the record uses it until the circuit's next
// change, as it always does; a copy of an open record rejects calls, and
// the probe its cooldown ends in finds the file not what it decided on and
// moves the counter on (unknown), so that every process reads the file and
// finds it lost. A directory replaced is seen within the recheck.
//
// What no process can tell: a process that never read the record, starting
// on a directory replaced by an empty one or an older copy of itself before
// a process that read it found the loss; and a circuit without a slot of
// its own (more than the index's slots, or its probe window full), whose
// Clear by another process a process that read its record takes for a loss:
// the circuit then probes once before it admits calls. Such a circuit's
// removed record is taken for none by a process that never read it; the
// process holding its open record reads the file again within reread
// (store.go) and finds the loss.

// saw records what a read or write of the circuit's record under the index
// m (nil: none) found: nil for none.
func (e *entry) saw(rec *driver.Record, m *mapping) {
	if seen := rec != nil; e.seen.Load() != seen {
		e.seen.Store(seen)
	}
	if rec != nil {
		if m == nil {
			if e.seenIn.Load() != nil {
				e.seenIn.Store(nil)
			}
		} else if id := e.seenIn.Load(); id == nil || !sameFile(*id, m.id) {
			e.seenIn.Store(&m.id) // the mapping's, shared by its circuits: m.id never changes
		}
	}
	e.last.Saw(rec)
}

// sameFile reports whether a and b are the same file.
func sameFile(a, b fileID) bool { return a.dev == b.dev && a.ino == b.ino }

// seenUnderOther reports whether this process last read or wrote a record
// of the circuit under another index than m: the state directory was
// replaced since.
func (e *entry) seenUnderOther(m *mapping) bool {
	id := e.seenIn.Load()
	return e.seen.Load() && id != nil && m != nil && !sameFile(*id, m.id)
}

// lostWhy reports why rec, read from the circuit's file by a read that
// began when e.last held seen, is a loss of the record, or "" when it is
// not: c is the circuit's counter (zero when there is no index) and v its
// value before the read; settled says it was stable and unchanged across the
// read.
func (e *entry) lostWhy(rec *driver.Record, seen lost.Seen, c counter, v uint64, settled bool) string {
	mark := markNone
	if settled && c.owned {
		mark = markOfValue(v)
	}
	if rec != nil {
		// A record found is judged by the mark the counter held before the
		// read, when stable, even if a change began during it: a change
		// writes the next version of the record, a new incarnation where
		// the mark says cleared or none, an unknown record, which is open,
		// or a Clear's closed record of a fresh incarnation, which the
		// mark before it calls behind: loadFile then reads again, and
		// judges a read the counter vouches for. (Concurrent callers of a
		// process read while one of them writes.)
		recMark := mark
		if c.owned && c.stable(v) {
			recMark = markOfValue(v)
		}
		switch {
		case rec.State != driver.StateClosed:
			return "" // open or half-open: it admits no call as closed
		case lost.Older(rec, seen):
			return "is older than one this process saw: an older copy was put back, or the state directory replaced by an older copy"
		case behind(rec, recMark):
			return "is not the one the change index says its last write left, nor a later one of its incarnation: an older copy was put back"
		}
		return ""
	}
	switch {
	case mark == markCleared && e.seenUnderOther(c.m):
		return "is gone, and the index that says it was cleared is not the one this process saw it under: the state directory was replaced by a copy taken after a Clear"
	case mark == markCleared:
		return ""
	case mark != markNone:
		return "is gone, though it was not cleared: removed behind the store's back"
	case c.m != nil && !settled:
		return "" // changed during the read: a Clear's, maybe
	case e.seen.Load():
		return "is gone, though it was not cleared: removed behind the store's back, or the state directory removed or replaced"
	}
	return ""
}

// lost handles the loss of the circuit's record: found is what the read
// found (nil: no file), which it replaces with lost.Unknown unless another
// process wrote first. It returns the record it wrote, or what the file
// holds after another process's write, judged as Load judges it with more
// losses to handle: a record lost again meanwhile (removed again before the
// read anew) is never returned as no record, which would admit calls as
// closed; once more is none, the call fails.
func (e *entry) lost(ctx context.Context, found *driver.Record, why string, more int) (*driver.Record, error) {
	report := func() {
		e.s.reports.Send(fmt.Errorf("%w: filestore: the record of circuit %q (%s) %s; the circuit is treated as unknown, its next call a probe",
			driver.ErrLost, e.name, e.recordPath(), why))
	}
	for range 3 {
		u := lost.Unknown(e.name, e.s.Now(), driver.NewID())
		err := e.replace(ctx, found, u, true)
		switch {
		case err == nil:
			report()
			return u, nil
		case !errors.Is(err, driver.ErrConflict):
			report()
			return nil, fmt.Errorf("the record was lost, and treating it as unknown failed: %w", err)
		}
		rec, err := e.loadFile(ctx, 0)
		switch {
		case err != nil:
			return nil, err
		case driver.SameRevision(rec, found):
			continue // refused for this process's clock (decidedBy), or lost again as it was: decide again
		case more > 0:
			return e.loadFile(ctx, more) // another process wrote first, or the file changed again: judge it
		case rec == nil:
			report()
			return nil, errors.New("the record was lost, and lost again each time it was treated as unknown")
		}
		return rec, nil // another process wrote first
	}
	report()
	return nil, errors.New("the record was lost, and treating it as unknown was refused three times")
}

// Notify adds a function for the store to report to (driver.Notifier): the
// circuits whose records it finds lost, each once, by the process that
// treats it as unknown. circuit.New calls it once for each Breaker over the
// store.
func (s *Store) Notify(report func(error)) { s.reports.Add(report) }
