package circuit

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// The alarm is the hot path's one speed trick: a reading of the clock costs
// 25 to 45 ns on the machine BENCHMARKS.md describes, more than a lean
// breaker's whole rejection. A kept record's standing rejection
// (machine.Standing) stands until its deadline, so the Breaker's alarm
// clock (alarms) marks it passed at the deadline, and the hot path returns
// its OpenError while it has not. The alarm never marks one early. One
// marked late (a process stopped or suspended past the deadline) delays the
// probe until the next call that loads the record decides by the clock: the
// file store's Watch fails at each recheck (one second). Only the kept
// record of a circuit's listed handle, decided by the local clock (the
// store's Clock, or the wall clock), gets an alarm.

// rejection is a rejection of a record, and its OpenError, shared by every
// call the record rejects before the same deadline: a rejection allocates
// nothing.
type rejection struct {
	rec    *driver.Record // the record it was decided for
	until  time.Time      // its deadline
	err    OpenError
	passed atomic.Bool // the deadline has come; set from the start without an alarm
	at     int         // its place in the alarms' heap, -1 when not in it
}

// alarms is a Breaker's one timer for the deadlines of its standing
// rejections, a heap of them by deadline (err.due, on the monotonic clock).
type alarms struct {
	mu    sync.Mutex
	heap  []*rejection
	timer *time.Timer
}

// set puts r, which has a deadline on the monotonic clock, on the alarm
// clock.
func (a *alarms) set(r *rejection) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r.at = len(a.heap)
	a.heap = append(a.heap, r)
	a.up(r.at)
	if a.heap[0] != r {
		return
	}
	if a.timer == nil {
		a.timer = time.AfterFunc(time.Until(r.err.due), a.ring)
	} else {
		a.timer.Reset(time.Until(r.err.due))
	}
}

// unset takes r off the alarm clock and marks it passed: its record is no
// longer kept.
func (a *alarms) unset(r *rejection) {
	r.passed.Store(true)
	a.mu.Lock()
	defer a.mu.Unlock()
	if i := r.at; i >= 0 {
		last := len(a.heap) - 1
		a.swap(i, last)
		a.heap, r.at = a.heap[:last], -1
		if i < last {
			a.down(i)
			a.up(i)
		}
	}
}

// ring marks every rejection whose deadline has come passed, and sets the
// timer for the next one.
func (a *alarms) ring() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.heap) > 0 {
		r := a.heap[0]
		if left := time.Until(r.err.due); left > 0 {
			a.timer.Reset(left)
			return
		}
		a.unsetLocked()
	}
}

// unsetLocked takes the earliest rejection off the heap and marks it
// passed. The caller holds a.mu.
func (a *alarms) unsetLocked() {
	r, last := a.heap[0], len(a.heap)-1
	r.passed.Store(true)
	a.swap(0, last)
	a.heap, r.at = a.heap[:last], -1
	a.down(0)
}

func (a *alarms) less(i, j int) bool { return a.heap[i].err.due.Before(a.heap[j].err.due) }

func (a *alarms) swap(i, j int) {
	a.heap[i], a.heap[j] = a.heap[j], a.heap[i]
	a.heap[i].at, a.heap[j].at = i, j
}

func (a *alarms) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !a.less(i, p) {
			return
		}
		a.swap(i, p)
		i = p
	}
}

func (a *alarms) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(a.heap) {
			return
		}
		if c+1 < len(a.heap) && a.less(c+1, c) {
			c++
		}
		if !a.less(c, i) {
			return
		}
		a.swap(i, c)
		i = c
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

// newRejection returns the rejection of v's record decided at now, in
// state until until (forced: an operator's hold). By the local clock its
// OpenError's RetryAfter counts down on the monotonic clock, and with
// alarm it has one.
func (c *Circuit) newRejection(v *view, state driver.State, until time.Time, forced, observe, alarm bool) *rejection {
	now := v.clk.Now() // the decision's reading
	left := until.Sub(now)
	r := &rejection{rec: v.rec, until: until, at: -1, err: OpenError{
		Name: c.name, State: state, Until: until, Forced: forced, ObserveOnly: observe, retryAfter: retryAfter(left),
	}}
	if !v.local || left <= 0 {
		r.passed.Store(true)
		return r
	}
	// The deadline on the monotonic clock: exactly, from now's monotonic
	// reading when it has one (the wall clock's); else from a reading taken
	// after now (the file store's boot clock has none), never earlier.
	at := now
	if now == now.Round(0) {
		at = time.Now()
	}
	r.err.due = at.Add(min(left, math.MaxInt64/2))
	if alarm {
		c.p.b.alarms.set(r)
	} else {
		r.passed.Store(true)
	}
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
	r := c.newRejection(v, a.State, a.Until, a.Forced, observe, false)
	m.rej.Store(r)
	return &r.err
}
