package circuit

import (
	"fmt"
	"runtime/debug"
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
}

// count counts the call of outcome o (when add is set) in the window of the
// circuit r under p at now, rec being its current record, and returns the
// window's counts.
//
// The cells may be a store's shared mapping: a fault in them (a file
// truncated under the process) is a *StateError, not a crash, and the next
// call asks the store for its cells again.
func (b *Breaker) count(r *ref, p machine.Policy, rec *driver.Record, now time.Time, o machine.Outcome, add bool) (n driver.Counts, err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if f := recover(); f != nil {
			r.win.Store(nil)
			n, err = driver.Counts{}, b.stateError(r, "window", fmt.Errorf("window counts: %v", f))
		}
	}()
	w := r.win.Load()
	if w == nil || w.span != p.Window || w.rec != rec {
		var err error
		if w, err = b.window(r, p.Window, rec); err != nil {
			return driver.Counts{}, err
		}
	}
	bk := driver.Bucket(now, p.Window)
	if add {
		w.cells.Add(w.epoch, bk, o == machine.Failure)
	}
	if o != machine.Failure {
		return driver.Counts{}, nil // only a failure can open the circuit
	}
	return w.cells.Counts(w.epoch, bk), nil
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
		c, _ := r.wins.LoadOrStore(span, new(driver.WindowCells))
		cells = c.(*driver.WindowCells)
	}
	w := &window{span: span, cells: cells, rec: rec, epoch: driver.WindowEpoch(rec)}
	r.win.Store(w)
	return w, nil
}
