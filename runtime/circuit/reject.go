package circuit

import (
	"math"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// The Breaker keeps each circuit's latest rejection: the record it was
// decided for and its OpenError, shared by every call that record rejects
// before the same deadline, so that a rejection allocates nothing. A
// rejection reads the clock once, in the machine's decision.

// rejection is a circuit's latest rejection.
type rejection struct {
	rec   *driver.Record // the record it was decided for
	until time.Time      // its deadline
	err   OpenError
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
	}
	c.rej.Store(rj)
	return &rj.err
}
