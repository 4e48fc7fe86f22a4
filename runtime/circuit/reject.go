package circuit

import (
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
	rec      *driver.Record // the record it was decided for
	deadline time.Duration  // when rec's deadline falls, since the Breaker's epoch
	err      *OpenError
}

// retryAfter is how long a call rejected with left to go should wait:
// rounded up to the millisecond, at least one second, at most retryAfterCap.
func retryAfter(left time.Duration) time.Duration {
	left = (left + time.Millisecond - 1).Truncate(time.Millisecond)
	return min(max(left, time.Second), retryAfterCap)
}

// rejected returns the OpenError that still stands for rec, observe-only
// or not as observe says, or nil when the call must be decided afresh.
func (r *ref) rejected(rec *driver.Record, epoch time.Time, observe bool) *OpenError {
	j := r.open.Load()
	if j == nil || j.rec != rec || j.err.ObserveOnly != observe {
		return nil
	}
	left := j.deadline - time.Since(epoch)
	if left <= 0 {
		return nil
	}
	if ra := retryAfter(left); ra != j.err.retryAfter {
		e := *j.err
		e.retryAfter = ra
		r.open.Store(&rejection{rec: rec, deadline: j.deadline, err: &e})
		return &e
	}
	return j.err
}

// reject returns the OpenError for a call to r rejected at now by the state machine's
// decision a for record rec, marked observe-only when observe is set, and
// remembers it when local is set.
func (r *ref) reject(rec *driver.Record, a machine.Admission, now, epoch time.Time, local, observe bool) *OpenError {
	left := a.Until.Sub(now)
	if j := r.open.Load(); j != nil && j.rec == rec && j.err.retryAfter == retryAfter(left) && j.err.ObserveOnly == observe {
		return j.err
	}
	e := &OpenError{Name: r.name, State: a.State, Until: a.Until, Forced: a.Forced, ObserveOnly: observe, retryAfter: retryAfter(left)}
	if local {
		r.open.Store(&rejection{rec: rec, deadline: time.Since(epoch) + left, err: e})
	} else {
		r.open.Store(&rejection{rec: rec, err: e})
	}
	return e
}
