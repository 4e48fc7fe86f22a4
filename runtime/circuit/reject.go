package circuit

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// A rejection shares one OpenError between every call that one record
// rejects before the same deadline, so that a rejection allocates nothing.
//
// The alarm is the hot path's speed trick, and its only one besides the
// shortcut itself: a kept record's standing rejection (machine.Standing)
// stands until its deadline, and Admit claims a probe at the deadline, so
// the hot path must know the deadline has not come. A reading of the clock
// costs 25 to 45 ns on the machine BENCHMARKS.md describes, several times a
// whole rejection of the lean in-memory breakers; a timer set for the
// deadline costs nothing per call. So each standing rejection of a record
// decided by the local clock (the store's Clock, or the wall clock) gets a
// timer (time.AfterFunc) that marks it passed at its deadline, and the hot
// path returns its OpenError while it has not. A timer never fires early;
// one that fires late (a process stopped, starved or suspended past the
// deadline) delays the next probe by as much at most, until the next call
// that loads the record decides by the clock: the file store's Watch fails
// at each of its rechecks (one second), and the decision then reads the
// clock. A decision by a store's own time or an injected clock
// (WithClock) sets no alarm: a local timer says nothing of that clock.

// rejection is a rejection of a record, and its OpenError.
type rejection struct {
	rec    *driver.Record // the record it was decided for
	until  time.Time      // its deadline
	err    OpenError
	passed atomic.Bool // the deadline has come (the alarm's timer fired); set from the start without one
	timer  *time.Timer // the alarm, or nil
}

// stop stops the rejection's alarm, if any, and marks it passed.
func (r *rejection) stop() {
	if r.timer != nil {
		r.timer.Stop()
	}
	r.passed.Store(true)
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

// newRejection returns the rejection of rec decided at now, by the local
// clock when local, in state until until (forced: an operator's hold). By
// the local clock, the OpenError's RetryAfter counts down on the monotonic
// clock.
func (c *Circuit) newRejection(rec *driver.Record, state driver.State, until time.Time, forced, observe, local bool, now time.Time) *rejection {
	left := until.Sub(now)
	r := &rejection{rec: rec, until: until, err: OpenError{
		Name: c.name, State: state, Until: until, Forced: forced, ObserveOnly: observe, retryAfter: retryAfter(left),
	}}
	r.passed.Store(true)
	if local && left > 0 {
		// The deadline on the monotonic clock: exactly, from now's
		// monotonic reading when it has one (the wall clock's); else from
		// a reading taken after now (the file store's boot clock has none),
		// never earlier than the store's.
		at := now
		if now == now.Round(0) {
			at = time.Now()
		}
		r.err.due = at.Add(min(left, math.MaxInt64/2))
	}
	return r
}

// alarm returns the standing rejection st of v's record, a kept one, with
// its alarm set for st.Until, or nil when its deadline has come by v's
// clock.
func (c *Circuit) alarm(v *view, st *machine.Standing) *rejection {
	now := v.clk.Now() // the decision about to be made reads the same
	left := st.Until.Sub(now)
	if left <= 0 {
		return nil
	}
	r := c.newRejection(v.rec, st.State, st.Until, st.Forced, false, true, now)
	r.passed.Store(false)
	r.timer = time.AfterFunc(left, func() { r.passed.Store(true) })
	return r
}

// rejection returns the OpenError of the machine's rejection a of v's
// record: the kept record's own, or the latest rejection's when it was
// decided for the same record and deadline, else a new one, which becomes
// the latest.
func (c *Circuit) rejection(v *view, a *machine.Admission, observe bool) *OpenError {
	if k := v.k; k != nil && k.rej != nil && !observe && k.rej.until.Equal(a.Until) {
		return &k.rej.err
	}
	m := c.extra()
	if r := m.rej.Load(); r != nil && r.rec == v.rec && r.until.Equal(a.Until) && r.err.ObserveOnly == observe {
		return &r.err
	}
	r := c.newRejection(v.rec, a.State, a.Until, a.Forced, observe, v.local, v.clk.Now())
	m.rej.Store(r)
	return &r.err
}
