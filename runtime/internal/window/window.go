// Package window keeps one circuit's counts for the rate rule
// (circuit.Policy.FailureRate): the cells of a time window or of the last
// calls, in the store's shared memory (driver.WindowStore,
// driver.CallWindowStore) or in the process's own, or the batches whose
// sums a distributed store's server keeps (driver.WindowSharer, batch.go).
// The Breaker counts a call through it and decides with the machine.
package window

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/alarm"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Stores is what a Breaker's store keeps of windows: each is nil when the
// store keeps none of that kind.
type Stores struct {
	Times  driver.WindowStore
	Calls  driver.CallWindowStore
	Sharer driver.WindowSharer
	ticks  ticks // the readings of the current buckets (clock.go)
}

// Circuit is the windows of one circuit of a Breaker. The zero Circuit is
// ready to count.
type Circuit struct {
	times    atomic.Pointer[cells[driver.WindowCells]] // the time window last used
	calls    atomic.Pointer[cells[driver.CallCells]]   // the count window last used
	batch    atomic.Pointer[batch]                     // the shared batch last used (batch.go)
	ownTimes sync.Map                                  // span → *driver.WindowCells, when the store keeps none
	ownCalls sync.Map                                  // calls → *driver.CallCells, when the store keeps none
	batches  sync.Map                                  // span → *batch, for a driver.WindowSharer
	tick     atomic.Pointer[tick]                      // the reading of the current bucket last used (clock.go)
}

// Success counts a Success in the window of the named circuit under p, rec
// being its current record, by the clock read (local: the local clock's,
// whose alarms clock may set). The Breaker counts so a call its Standing
// admitted quietly, and a Sharer's windows are not counted so (Stores).
func (c *Circuit) Success(st *Stores, name string, p *machine.Policy, rec *driver.Record, read func() time.Time, alarms *alarm.Clock, local bool) error {
	clk := c.clock(&st.ticks, read, alarms, local, p.Window)
	_, _, err := c.Count(context.Background(), st, name, p, rec, &clk, machine.Success, true)
	return err
}

// cells is a window's cells (a span, or a number of calls: w), and the
// epoch of the record they last counted for.
type cells[T any] struct {
	w     uint64
	cells *T
	rec   *driver.Record
	epoch uint64
}

// Count counts the call of outcome o (when add is set) in the window of
// the named circuit under p, rec being its current record, and returns the
// window's counts, which only a Failure needs, and whether it counted the
// call: with an error too, when a flush failed after the call joined its
// batch. A time window asks clk, the decision's clock, for the time; a
// count window never does. An error is the store's.
func (c *Circuit) Count(ctx context.Context, st *Stores, name string, p *machine.Policy, rec *driver.Record, clk *machine.Clock, o machine.Outcome, add bool) (driver.Counts, bool, error) {
	failure := o == machine.Failure
	switch {
	case p.WindowCalls > 0:
		n := p.WindowCalls
		var store func() (*driver.CallCells, error)
		if st.Calls != nil {
			store = func() (*driver.CallCells, error) { return st.Calls.CallCells(name, n) }
		}
		w, err := cellsOf(&c.calls, &c.ownCalls, uint64(n), rec, store)
		if err != nil {
			return driver.Counts{}, false, err
		}
		if add {
			w.cells.Add(w.epoch, n, failure)
		}
		if !failure {
			return driver.Counts{}, add, nil // only a failure can open the circuit
		}
		return w.cells.Counts(w.epoch, n), add, nil
	case st.Sharer != nil:
		return c.share(ctx, st.Sharer, name, p, rec, clk.Now(), o, add)
	}
	span := p.Window
	var store func() (*driver.WindowCells, error)
	if st.Times != nil {
		store = func() (*driver.WindowCells, error) { return st.Times.WindowCells(name, span) }
	}
	w, err := cellsOf(&c.times, &c.ownTimes, uint64(span), rec, store)
	if err != nil {
		return driver.Counts{}, false, err
	}
	bk := driver.Bucket(clk.Now(), span)
	c.forget(span, bk)
	if add {
		w.cells.Add(w.epoch, bk, failure)
	}
	if !failure {
		return driver.Counts{}, add, nil
	}
	return w.cells.Counts(w.epoch, bk), add, nil
}

// cellsOf returns the cells of window w for record rec, last being those
// last used: the same cells while the window is the same, the store's
// (store, nil when it keeps none) or else the process's own (in own) for
// another.
func cellsOf[T any](last *atomic.Pointer[cells[T]], own *sync.Map, w uint64, rec *driver.Record, store func() (*T, error)) (*cells[T], error) {
	k := last.Load()
	if k != nil && k.w == w && k.rec == rec {
		return k, nil
	}
	var cs *T
	switch {
	case k != nil && k.w == w:
		cs = k.cells
	case store != nil:
		var err error
		if cs, err = store(); err != nil {
			return nil, err
		}
	default:
		v, _ := own.LoadOrStore(w, new(T))
		cs = v.(*T)
	}
	k = &cells[T]{w: w, cells: cs, rec: rec, epoch: driver.WindowEpoch(rec)}
	last.Store(k)
	return k, nil
}
