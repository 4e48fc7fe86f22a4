package circuit

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// window is the driver.WindowCells a circuit last used, and their span.
type window struct {
	span  time.Duration
	cells *driver.WindowCells
	rec   *driver.Record // the record whose epoch is epoch
	epoch uint64
	// current is the bucket that holds the time now, plus one (0: not
	// known), while the Breaker reads the local clock: a timer clears it
	// when the bucket ends. A success is counted in it without reading the
	// clock, once a call read the clock in it (driver.AddStarted); a timer
	// that fires late counts a success of the next bucket, for that long,
	// in the one before, or not at all once another process began a later
	// bucket in its cell.
	current atomic.Int64
}

// count counts the call of outcome o (when add is set) in the window of the
// circuit r under p, rec being its current record, and returns the window's
// counts. The call's time is *now, read with b.now(storeNow) and set there
// when it is zero and the count needs it: a Failure, or a Success once a
// bucket has ended.
//
// The cells may be a store's shared mapping: a fault in them (a file
// truncated under the process) is a *StateError, not a crash, and the next
// call asks the store for its cells again.
func (b *Breaker) count(r *ref, p *machine.Policy, rec *driver.Record, storeNow time.Time, now *time.Time, o machine.Outcome, add bool) (n driver.Counts, err error) {
	defer b.cellFault(r, debug.SetPanicOnFault(true), &n, &err)
	w := r.win.Load()
	if w == nil || w.span != p.Window || w.rec != rec {
		var err error
		if w, err = b.window(r, p.Window, rec); err != nil {
			return driver.Counts{}, err
		}
	}
	local := storeNow.IsZero() && b.clock == nil
	if !add && o != machine.Failure {
		return driver.Counts{}, nil
	}
	if now.IsZero() {
		*now = b.now(storeNow)
	}
	bk := driver.Bucket(*now, p.Window)
	if local && w.current.Load() != bk+1 {
		w.keep(bk, *now)
	}
	if add {
		w.cells.Add(w.epoch, bk, o == machine.Failure)
	}
	if o != machine.Failure {
		return driver.Counts{}, nil // only a failure can open the circuit
	}
	return w.cells.Counts(w.epoch, bk), nil
}

// keep makes bk, the bucket that holds now, the window's current bucket
// until it ends.
func (w *window) keep(bk int64, now time.Time) {
	width := int64(w.span / driver.WindowBuckets)
	left := time.Duration((bk+1)*width - now.UnixNano())
	old := w.current.Load()
	if left <= 0 || old >= bk+1 || !w.current.CompareAndSwap(old, bk+1) {
		return // the bucket ended, or a later one is current
	}
	time.AfterFunc(left, func() { w.current.CompareAndSwap(bk+1, 0) })
}

// cellFault, deferred by count and countCalls, restores the fault mode old
// and turns a fault in the window cells (a store's shared mapping) into a
// *StateError in *n and *err; the next call asks the store for its cells
// again.
func (b *Breaker) cellFault(r *ref, old bool, n *driver.Counts, err *error) {
	debug.SetPanicOnFault(old)
	if f := recover(); f != nil {
		r.win.Store(nil)
		if m := r.more.Load(); m != nil {
			m.calls.Store(nil)
		}
		*n, *err = driver.Counts{}, b.stateError(r, "window", fmt.Errorf("window counts: %v", f))
	}
}

// callWindow is the driver.CallCells a circuit last used, and their size.
type callWindow struct {
	n     int
	cells *driver.CallCells
	rec   *driver.Record // the record whose epoch is epoch
	epoch uint64
}

// countCalls counts the call of outcome o (when add is set) in the window
// of the last p.WindowCalls calls of the circuit r, rec being its current
// record, and returns the window's counts. It reads no clock. The cells are
// the store's when it is a driver.CallWindowStore, else the Breaker's own.
func (b *Breaker) countCalls(r *ref, p *machine.Policy, rec *driver.Record, o machine.Outcome, add bool) (n driver.Counts, err error) {
	defer b.cellFault(r, debug.SetPanicOnFault(true), &n, &err)
	more := r.extra()
	w := more.calls.Load()
	if w == nil || w.n != p.WindowCalls || w.rec != rec {
		var cells *driver.CallCells
		switch {
		case w != nil && w.n == p.WindowCalls:
			cells = w.cells
		case b.callWins != nil:
			c, err := b.callWins.CallCells(r.name, p.WindowCalls)
			if err != nil {
				return driver.Counts{}, b.stateError(r, "window", err)
			}
			cells = c
		default:
			c, _ := more.callSet.LoadOrStore(p.WindowCalls, new(driver.CallCells))
			cells = c.(*driver.CallCells)
		}
		w = &callWindow{n: p.WindowCalls, cells: cells, rec: rec, epoch: driver.WindowEpoch(rec)}
		more.calls.Store(w)
	}
	if add {
		w.cells.Add(w.epoch, w.n, o == machine.Failure)
	}
	if o != machine.Failure {
		return driver.Counts{}, nil // only a failure can open the circuit
	}
	return w.cells.Counts(w.epoch, w.n), nil
}

// window finds the cells of r's window of span for record rec: the store's
// when it keeps them, else the Breaker's own.
func (b *Breaker) window(r *ref, span time.Duration, rec *driver.Record) (*window, error) {
	var cells *driver.WindowCells
	if w := r.win.Load(); w != nil && w.span == span {
		cells = w.cells
	} else if b.windows != nil {
		c, err := b.windows.WindowCells(r.name, span)
		if err != nil {
			return nil, b.stateError(r, "window", err)
		}
		cells = c
	} else {
		c, _ := r.extra().wins.LoadOrStore(span, new(driver.WindowCells))
		cells = c.(*driver.WindowCells)
	}
	w := &window{span: span, cells: cells, rec: rec, epoch: driver.WindowEpoch(rec)}
	r.win.Store(w)
	return w, nil
}
