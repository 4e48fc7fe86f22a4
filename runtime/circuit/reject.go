package circuit

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Rejecting a call must cost no more than the call an in-memory breaker
// would make, so the Breaker remembers its latest rejection of each circuit:
// the record it was decided for, and when that record's deadline falls on
// the process's monotonic clock. While the store still returns that same
// record (records are immutable: a change is a new one) and the deadline
// has not come, the rejection stands without deciding again, and its
// OpenError is shared by the calls it rejects: RetryAfter is worked out
// when it is asked.
//
// Far from the deadline it stands without reading the clock either: a
// timer marks the rejection near (nearTime before the deadline), and only a
// near rejection reads the monotonic clock to see whether the deadline has
// come. A timer never fires early; one that fires late, in a process that
// was stopped or starved for longer than nearTime, keeps rejecting past the
// deadline until it fires. That can delay a probe, never admit a call early.
//
// This holds only for stores whose processes share the local clock (Load
// returns the zero Time, as the file store's does): the process's monotonic
// clock advances with it. With a store's own time, or an injected clock,
// every rejection is decided afresh.

// nearTime is how long before its deadline a rejection reads the clock on
// every call: at most half the time it was decided for, at most a second.
func nearTime(left time.Duration) time.Duration { return min(left/2, time.Second) }

// minTimer is the shortest time to a near rejection worth a timer: a
// rejection decided closer to its deadline is near from the start.
const minTimer = 10 * time.Millisecond

// rejection is a circuit's latest rejection.
type rejection struct {
	rec   *driver.Record // the record it was decided for
	local bool           // deadline, near and timer are set
	// deadline is when rec's deadline falls, since the Breaker's epoch.
	deadline time.Duration
	near     atomic.Bool // the deadline is within nearTime
	timer    *time.Timer // sets near; nil when it was near from the start
	err      OpenError
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

// rejected returns the OpenError that still stands for rec, observe-only
// or not as observe says, or nil when the call must be decided afresh. It
// allocates nothing, and reads the monotonic clock only when the
// rejection's deadline is near.
func (r *ref) rejected(rec *driver.Record, epoch time.Time, observe bool) *OpenError {
	j := r.open.Load()
	if j == nil || j.rec != rec || !j.local || j.err.ObserveOnly != observe {
		return nil
	}
	if j.near.Load() && time.Since(epoch) >= j.deadline {
		return nil
	}
	return &j.err
}

// reject returns the OpenError for a call to r rejected at now by the state
// machine's decision a for record rec, marked observe-only when observe is
// set, and remembers it when local is set.
func (r *ref) reject(rec *driver.Record, a machine.Admission, now, epoch time.Time, local, observe bool) *OpenError {
	left := a.Until.Sub(now)
	if local {
		if j := r.open.Load(); j != nil && j.rec == rec && j.local && j.err.ObserveOnly == observe {
			return &j.err
		}
	} else if j := r.open.Load(); j != nil && j.rec == rec && !j.local && j.err.retryAfter == retryAfter(left) && j.err.ObserveOnly == observe {
		return &j.err
	}
	j := &rejection{rec: rec, err: OpenError{Name: r.name, State: a.State, Until: a.Until, Forced: a.Forced, ObserveOnly: observe, retryAfter: retryAfter(left)}}
	if local {
		// left is by the clock now was read from. A reading of the local
		// clock carries a monotonic one, which places the deadline
		// exactly; a store's clock (the file store's boot clock) may read
		// another time than the wall clock, so the deadline is left from a
		// monotonic reading taken after now: no earlier than the store's.
		mono := now.Sub(epoch)
		if now == now.Round(0) { // no monotonic reading: Round(0) strips it
			mono = time.Since(epoch)
		}
		j.local = true
		j.deadline = mono + min(left, math.MaxInt64-mono)
		j.err.due = epoch.Add(j.deadline) // monotonic: RetryAfter counts down
		if wait := left - nearTime(left); wait >= minTimer {
			j.timer = time.AfterFunc(wait, func() { j.near.Store(true) })
		} else {
			j.near.Store(true)
		}
	}
	if old := r.open.Swap(j); old != nil && old.timer != nil {
		old.timer.Stop()
	}
	return &j.err
}
