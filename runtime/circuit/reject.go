package circuit

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// A rejection costs an in-memory breaker a few nanoseconds; a reading of the
// clock costs more than that (30 ns for the monotonic clock, 55 ns for the
// wall clock on the machine BENCHMARKS.md describes). So the Breaker keeps
// each circuit's latest rejection: the record it was decided for, its
// OpenError, shared by every call that record rejects, and a timer set for
// its deadline. While the store still returns that record and the timer has
// not fired, the machine's decision is told the deadline has not come
// (machine.Clock.NotYet) and reads no clock. A timer never fires early; one
// that fires late, in a process stopped or starved past the deadline,
// delays the next probe by as much, and never admits a call early.
//
// Only a decision by the local clock uses a timer: a store's own time, or
// an injected clock, says nothing of the local timers.

// rejection is a circuit's latest rejection.
type rejection struct {
	rec    *driver.Record // the record it was decided for
	until  time.Time      // its deadline
	passed atomic.Bool    // the deadline has come; always set without a timer
	timer  *time.Timer
	err    OpenError
}

// tell tells clk, the clock of a decision on the rejection's record, that
// the deadline has not come, while the timer says so.
func (rj *rejection) tell(clk *machine.Clock) {
	if !rj.passed.Load() {
		clk.NotYet(rj.until)
	}
}

// retryAfter is how long a call rejected with left to go should wait:
// rounded up to the millisecond, at least one second, at most retryAfterCap.
func retryAfter(left time.Duration) time.Duration {
	if left > retryAfterCap {
		return retryAfterCap
	}
	left = (left + time.Millisecond - 1).Truncate(time.Millisecond)
	return max(left, time.Second)
}

// rejection returns the OpenError of the machine's rejection a of v's
// record: rj's when rj (the latest rejection, or nil) was decided for the
// same record and deadline, else a new one, which becomes the latest.
func (c *Circuit) rejection(v *view, rj *rejection, a *machine.Admission, observe bool) *OpenError {
	if rj != nil && rj.rec == v.rec && rj.until.Equal(a.Until) && rj.err.ObserveOnly == observe {
		return &rj.err
	}
	now := v.clk.Now() // read by the decision already
	left := a.Until.Sub(now)
	rj = &rejection{rec: v.rec, until: a.Until, err: OpenError{
		Name: c.name, State: a.State, Until: a.Until, Forced: a.Forced, ObserveOnly: observe, retryAfter: retryAfter(left),
	}}
	if v.local && left > 0 {
		// The deadline on the monotonic clock: exactly, from now's
		// monotonic reading when it has one (the local clock's); else from
		// a reading taken after now (the file store's boot clock has none),
		// never earlier than the store's.
		at := now
		if now == now.Round(0) {
			at = time.Now()
		}
		rj.err.due = at.Add(min(left, math.MaxInt64/2))
		rj.timer = time.AfterFunc(left, func() { rj.passed.Store(true) })
	} else {
		rj.passed.Store(true)
	}
	if old := c.rej.Swap(rj); old != nil && old.timer != nil {
		old.timer.Stop()
	}
	return &rj.err
}
