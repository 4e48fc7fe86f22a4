package circuit

import (
	"math"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/alarm"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// The alarm is the hot path's speed trick: a clock reading costs more than a
// lean breaker's whole call (BENCHMARKS.md). A kept standing rejection
// returns its OpenError until the Breaker's alarm clock marks its deadline
// passed: never early, late only for a stopped process (docs/design.md, the
// hot path). The rate rule's window reads the clock once a bucket so
// (window.Circuit.Clock). Only a listed handle's kept rejection gets one.

// rejection is a record's rejection and its OpenError, shared by the calls
// it rejects while its deadline and RetryAfter hold: it allocates nothing.
type rejection struct {
	rec   *driver.Record // the record it was decided for
	err   OpenError
	alarm alarm.Alarm // set on the Breaker's alarm clock for the deadline, or passed
}

// newRejection returns the rejection of v's record, in state until until
// (forced: an operator's hold). By the local clock its RetryAfter counts
// down on the monotonic clock, and with alarm it has an alarm.
func (c *Circuit) newRejection(v *view, state driver.State, until time.Time, forced, observe, alarm bool) *rejection {
	now := v.clk.Now() // the decision's reading
	left := until.Sub(now)
	r := &rejection{rec: v.rec, err: OpenError{
		Name: c.name, State: state, Until: until, Forced: forced, ObserveOnly: observe, retryAfter: machine.RetryAfter(left),
	}}
	if !v.local || left <= 0 {
		return r
	}
	// The deadline on the monotonic clock: from now's reading when it has
	// one (only the wall clock's has, New), else from a later one.
	at := now
	if now == now.Round(0) {
		at = time.Now()
	}
	r.err.due = at.Add(min(left, math.MaxInt64/2))
	if alarm {
		c.p.b.alarms.Set(&r.alarm, r.err.due)
	}
	return r
}

// rejection returns the OpenError of the machine's rejection a of v's
// record: the kept record's, or the latest one of the same record and
// deadline, else a new one, kept as the latest.
func (c *Circuit) rejection(v *view, a *machine.Admission, observe bool) *OpenError {
	if k := v.k; k != nil && k.rej != nil && !observe && k.rej.err.Until.Equal(a.Until) {
		return &k.rej.err
	}
	m := c.extra()
	if r := m.rej.Load(); r != nil && r.rec == v.rec && r.err.Until.Equal(a.Until) && r.err.ObserveOnly == observe &&
		(!r.err.due.IsZero() || r.err.retryAfter == machine.RetryAfter(a.Until.Sub(v.clk.Now()))) {
		return &r.err
	}
	r := c.newRejection(v, a.State, a.Until, a.Forced, observe, false)
	m.rej.Store(r)
	return &r.err
}
