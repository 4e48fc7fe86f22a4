package circuit

import (
	"math"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Rejecting a call must cost no more than the call an in-memory breaker
// would make, so the Breaker remembers its latest rejection of each circuit:
// the record it was decided for, and when that record's deadline falls on
// the process's monotonic clock. While the store still returns that same
// record (records are immutable: a change is a new one) and the deadline
// has not come, the rejection stands without reading the store's clock or
// deciding again. Calls rejected within the same millisecond share one
// OpenError.
//
// This holds only for stores whose processes share the local clock (Load
// returns the zero Time, as the file store's does): the process's monotonic
// clock advances with it. With a store's own time, or an injected clock,
// every rejection is decided afresh.

// rejection is a circuit's latest rejection.
type rejection struct {
	rec   *driver.Record // the record it was decided for
	local bool           // deadline, lo and hi are set
	// deadline is when rec's deadline falls, since the Breaker's epoch;
	// err's RetryAfter holds while the time since the epoch is in [lo, hi).
	deadline, lo, hi time.Duration
	err              OpenError
}

// retryAfter is how long a call rejected with left to go should wait:
// rounded up to the millisecond, at least one second, at most retryAfterCap.
func retryAfter(left time.Duration) time.Duration {
	left = (left + time.Millisecond - 1).Truncate(time.Millisecond)
	return min(max(left, time.Second), retryAfterCap)
}

// span returns the times since the epoch, [lo, hi), at which a call to a
// circuit whose deadline falls at deadline is told to retry after ra, as
// retryAfter rounds it.
func span(deadline, ra time.Duration) (lo, hi time.Duration) {
	switch ra {
	case time.Second: // every left of (0, 1s]
		return deadline - time.Second, deadline
	case retryAfterCap: // every left above the cap, less a millisecond
		return math.MinInt64, deadline - ra + time.Millisecond
	}
	return deadline - ra, deadline - ra + time.Millisecond
}

// rejected returns the OpenError that still stands for rec, observe-only
// or not as observe says, or nil when the call must be decided afresh. It
// reads the monotonic clock once, and allocates only when the retry-after
// time has moved on by a millisecond since the last rejection.
func (r *ref) rejected(rec *driver.Record, epoch time.Time, observe bool) *OpenError {
	j := r.open.Load()
	if j == nil || j.rec != rec || !j.local || j.err.ObserveOnly != observe {
		return nil
	}
	now := time.Since(epoch)
	if now >= j.lo && now < j.hi {
		return &j.err
	}
	left := j.deadline - now
	if left <= 0 {
		return nil
	}
	next := &rejection{rec: rec, local: true, deadline: j.deadline, err: j.err}
	next.err.retryAfter = retryAfter(left)
	next.lo, next.hi = span(j.deadline, next.err.retryAfter)
	r.open.Store(next)
	return &next.err
}

// reject returns the OpenError for a call to r rejected at now by the state machine's
// decision a for record rec, marked observe-only when observe is set, and
// remembers it when local is set.
func (r *ref) reject(rec *driver.Record, a machine.Admission, now, epoch time.Time, local, observe bool) *OpenError {
	left := a.Until.Sub(now)
	ra := retryAfter(left)
	if j := r.open.Load(); j != nil && j.rec == rec && j.err.retryAfter == ra && j.err.ObserveOnly == observe {
		return &j.err
	}
	j := &rejection{rec: rec, err: OpenError{Name: r.name, State: a.State, Until: a.Until, Forced: a.Forced, ObserveOnly: observe, retryAfter: ra}}
	if local {
		j.local = true
		j.deadline = now.Sub(epoch) + left // the same reading as now: no rounding falls between two
		j.lo, j.hi = span(j.deadline, ra)
	}
	r.open.Store(j)
	return &j.err
}
