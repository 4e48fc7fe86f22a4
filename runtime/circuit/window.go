package circuit

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// The rate rule looks at a circuit's recent calls through a window: the
// last Policy.Window, cut into WindowBuckets buckets of Window/WindowBuckets
// each, aligned on the store's clock (bucket i holds the calls completed in
// [i·width, (i+1)·width) since the Unix epoch). The window at a time is the
// bucket holding that time and the WindowBuckets-1 before it, so it reaches
// back between Window−width and Window. This file is the one definition of
// that arithmetic; every store that keeps window counts keeps them in
// WindowCells.
//
// A window counts the calls of one closed period of one record: its epoch
// (WindowEpoch) changes when a probe closes the circuit again or Clear
// removes the record, and the first call of the new epoch empties the
// window, so the failures that opened the circuit cannot open it again.

// WindowBuckets is the number of buckets a window is cut into.
const WindowBuckets = 10

// Counts are the calls of a window: completed calls (Success or Failure;
// Ignored never counts) and, among them, failures.
type Counts struct {
	Calls, Failures uint64
}

// Bucket returns the index of the bucket of a window of span w that holds t.
func Bucket(t time.Time, w time.Duration) int64 {
	width := int64(w / WindowBuckets)
	n := t.UnixNano()
	b := n / width
	if n < 0 && n%width != 0 {
		b-- // floor, for times before 1970
	}
	return b
}

// WindowCells holds one window's counts, lock-free: a cell per bucket,
// holding the calls and failures of the latest bucket that used it. Each
// count is a 64-bit word whose upper half tags it with the low 32 bits of
// its bucket index, so that a word left from an earlier bucket is seen as
// empty, and that starting a bucket and counting in it is one
// compare-and-swap with no lock. WindowCells may live in memory shared by
// processes (the file store maps it from a file); its zero value is an
// empty window.
type WindowCells struct {
	epoch atomic.Uint64
	cells [WindowBuckets]struct {
		calls, failures atomic.Uint64
	}
}

const countMask = 1<<32 - 1

// Add counts one completed call of epoch e in bucket b: a failure when
// failure is set, else a success. The first call of a new epoch empties the
// window; a call of an epoch that another call has since replaced is not
// counted.
//
// The change of epoch is not atomic with the emptying that follows it, an
// imprecision accepted to keep Add free of locks: a call counted at the
// moment the epoch changes may be lost (another call of the new epoch
// counted it before the emptying) or land in the new window (a call of the
// old epoch that checked the epoch before the change counts after the
// emptying). Only calls settling at that moment are concerned, one count
// each, and the epoch changes only when a circuit closes again or is
// cleared.
func (c *WindowCells) Add(e uint64, b int64, failure bool) {
	for h := c.epoch.Load(); h != e; h = c.epoch.Load() {
		if h != 0 && h>>32 == e>>32 && int32(uint32(h)-uint32(e)) > 0 {
			return // a call of an earlier generation, settling late
		}
		if c.epoch.CompareAndSwap(h, e) {
			for i := range c.cells {
				c.cells[i].calls.Store(0)
				c.cells[i].failures.Store(0)
			}
			break
		}
	}
	cell := &c.cells[bucketSlot(b)]
	add(&cell.calls, b)
	if failure {
		add(&cell.failures, b)
	}
}

// add counts one in w for bucket b: it starts w afresh when w holds an
// earlier bucket, and saturates rather than wrap.
func add(w *atomic.Uint64, b int64) {
	tag := uint64(uint32(b)) << 32
	for {
		old := w.Load()
		next := tag | 1
		if d := int32(uint32(old>>32) - uint32(b)); old != 0 && d > 0 && d <= WindowBuckets {
			return // a later bucket already uses the cell: b is past
		}
		if old&^countMask == tag {
			if old&countMask == countMask {
				return
			}
			next = old + 1
		}
		if w.CompareAndSwap(old, next) {
			return
		}
	}
}

// Counts returns the counts of epoch e in the window whose latest bucket
// is b.
func (c *WindowCells) Counts(e uint64, b int64) Counts {
	var n Counts
	if c.epoch.Load() != e {
		return n
	}
	for i := range int64(WindowBuckets) {
		cell := &c.cells[bucketSlot(b-i)]
		tag := uint64(uint32(b-i)) << 32
		if w := cell.calls.Load(); w&^countMask == tag {
			n.Calls += w & countMask
		}
		if w := cell.failures.Load(); w&^countMask == tag {
			n.Failures += w & countMask
		}
	}
	n.Failures = min(n.Failures, n.Calls) // a failure is counted in calls first
	return n
}

func bucketSlot(b int64) int64 {
	s := b % WindowBuckets
	if s < 0 {
		s += WindowBuckets
	}
	return s
}

// WindowEpoch returns the epoch of rec's window: a hash of its incarnation
// in the upper 32 bits and its generation in the lower, so that the window
// of a later generation is never emptied by a call of an earlier one.
func WindowEpoch(rec *Record) uint64 {
	h := uint32(2166136261) // FNV-1a
	for i := range len(rec.Incarnation) {
		h = (h ^ uint32(rec.Incarnation[i])) * 16777619
	}
	return uint64(h|1)<<32 | uint64(uint32(rec.Generation))
}

// window is the WindowCells a circuit last used, and their span.
type window struct {
	span  time.Duration
	cells *WindowCells
	rec   *Record // the record whose epoch is epoch
	epoch uint64
}

// count counts the call of outcome o (when add is set) in the window of the
// circuit r under p at now, rec being its current record, and returns the
// window's counts.
//
// The cells may be a store's shared mapping: a fault in them (a file
// truncated under the process) is a *StateError, not a crash, and the next
// call asks the store for its cells again.
func (b *Breaker) count(r *ref, p Policy, rec *Record, now time.Time, o Outcome, add bool) (n Counts, err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if f := recover(); f != nil {
			r.win.Store(nil)
			n, err = Counts{}, &StateError{Name: r.name, Op: "window", Err: fmt.Errorf("window counts: %v", f)}
		}
	}()
	w := r.win.Load()
	if w == nil || w.span != p.Window || w.rec != rec {
		var err error
		if w, err = b.window(r, p.Window, rec); err != nil {
			return Counts{}, err
		}
	}
	bk := Bucket(now, p.Window)
	if add {
		w.cells.Add(w.epoch, bk, o == Failure)
	}
	if o != Failure {
		return Counts{}, nil // only a failure can open the circuit
	}
	return w.cells.Counts(w.epoch, bk), nil
}

// window finds the cells of r's window of span for record rec: the store's
// when it keeps them, else the Breaker's own.
func (b *Breaker) window(r *ref, span time.Duration, rec *Record) (*window, error) {
	var cells *WindowCells
	if w := r.win.Load(); w != nil && w.span == span {
		cells = w.cells
	} else if b.windows != nil {
		c, err := b.windows.WindowCells(r.name, span)
		if err != nil {
			return nil, &StateError{Name: r.name, Op: "window", Err: err}
		}
		cells = c
	} else {
		c, _ := r.wins.LoadOrStore(span, new(WindowCells))
		cells = c.(*WindowCells)
	}
	w := &window{span: span, cells: cells, rec: rec, epoch: WindowEpoch(rec)}
	r.win.Store(w)
	return w, nil
}
