package circuit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// more is the part of a Circuit that only some circuits use, made on first
// use (or with the Circuit, for bound): the store's handle of a
// driver.Binder, the rate rule's windows, the latest rejection of a record
// not kept, a settlement owed and the pacing of reports.
type more struct {
	bound    driver.BoundStore          // the store's handle of the circuit (driver.Binder)
	rej      atomic.Pointer[rejection]  // the latest rejection of a record not kept (reject.go)
	owed     atomic.Pointer[owed]       // a settlement the store refused (owed.go)
	win      atomic.Pointer[window]     // the time window last used
	calls    atomic.Pointer[callWindow] // the count window last used
	batch    atomic.Pointer[batch]      // the shared batch last used (share.go)
	wins     sync.Map                   // window span → *driver.WindowCells, when the store keeps none
	callSet  sync.Map                   // window calls → *driver.CallCells, when the store keeps none
	batches  sync.Map                   // window span → *batch, for a driver.WindowSharer
	reported atomic.Int64               // when a StateError was last reported (Breaker.since), 0 never
}

// extra returns c's more, making it on first use.
func (c *Circuit) extra() *more {
	if m := c.more.Load(); m != nil {
		return m
	}
	c.more.CompareAndSwap(nil, new(more))
	return c.more.Load()
}

// owing returns the settlement the circuit owes, or nil.
func (c *Circuit) owing() *owed {
	if m := c.more.Load(); m != nil {
		return m.owed.Load()
	}
	return nil
}

// window is the cells of a circuit's time window, and the epoch of the
// record they last counted for.
type window struct {
	span  time.Duration
	cells *driver.WindowCells
	rec   *driver.Record
	epoch uint64
}

// callWindow is the cells of a circuit's count window, and the epoch of the
// record they last counted for.
type callWindow struct {
	n     int
	cells *driver.CallCells
	rec   *driver.Record
	epoch uint64
}

// count counts the call of outcome o (when add is set) in the rate rule's
// window of the circuit under p, v.rec being its current record, and
// returns the window's counts, which only a Failure needs. A time window
// reads the decision's clock, a count window none.
func (c *Circuit) count(ctx context.Context, p *machine.Policy, v *view, o machine.Outcome, add bool) (driver.Counts, error) {
	switch {
	case p.WindowCalls > 0:
		return c.countCalls(p, v.rec, o, add)
	case c.p.b.sharer != nil:
		return c.countShared(ctx, p, v.rec, v.clk.Now(), o, add)
	}
	w, err := c.window(p.Window, v.rec)
	if err != nil {
		return driver.Counts{}, err
	}
	bk := driver.Bucket(v.clk.Now(), p.Window)
	if add {
		w.cells.Add(w.epoch, bk, o == machine.Failure)
	}
	if o != machine.Failure {
		return driver.Counts{}, nil // only a failure can open the circuit
	}
	return w.cells.Counts(w.epoch, bk), nil
}

// window returns the cells of the circuit's window of span for record rec:
// the store's when it keeps them, else the Breaker's own.
func (c *Circuit) window(span time.Duration, rec *driver.Record) (*window, error) {
	m := c.extra()
	w := m.win.Load()
	if w != nil && w.span == span && w.rec == rec {
		return w, nil
	}
	var cells *driver.WindowCells
	switch {
	case w != nil && w.span == span:
		cells = w.cells
	case c.p.b.windows != nil:
		var err error
		if cells, err = c.p.b.windows.WindowCells(c.name, span); err != nil {
			return nil, c.stateError("window", err)
		}
	default:
		v, _ := m.wins.LoadOrStore(span, new(driver.WindowCells))
		cells = v.(*driver.WindowCells)
	}
	w = &window{span: span, cells: cells, rec: rec, epoch: driver.WindowEpoch(rec)}
	m.win.Store(w)
	return w, nil
}

// countCalls is count for a window of the last p.WindowCalls calls: the
// store's cells when it is a driver.CallWindowStore, else the Breaker's own.
func (c *Circuit) countCalls(p *machine.Policy, rec *driver.Record, o machine.Outcome, add bool) (driver.Counts, error) {
	m := c.extra()
	w := m.calls.Load()
	if w == nil || w.n != p.WindowCalls || w.rec != rec {
		var cells *driver.CallCells
		switch {
		case w != nil && w.n == p.WindowCalls:
			cells = w.cells
		case c.p.b.callWins != nil:
			var err error
			if cells, err = c.p.b.callWins.CallCells(c.name, p.WindowCalls); err != nil {
				return driver.Counts{}, c.stateError("window", err)
			}
		default:
			v, _ := m.callSet.LoadOrStore(p.WindowCalls, new(driver.CallCells))
			cells = v.(*driver.CallCells)
		}
		w = &callWindow{n: p.WindowCalls, cells: cells, rec: rec, epoch: driver.WindowEpoch(rec)}
		m.calls.Store(w)
	}
	if add {
		w.cells.Add(w.epoch, w.n, o == machine.Failure)
	}
	if o != machine.Failure {
		return driver.Counts{}, nil
	}
	return w.cells.Counts(w.epoch, w.n), nil
}
