package circuit

import (
	"errors"
	"fmt"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// ErrOpen is matched by every *OpenError, for callers who use errors.Is the
// way sony/gobreaker users match its ErrOpenState.
var ErrOpen error = errOpen{}

// errOpen is ErrOpen's type: *OpenError's Is matches it by its type alone,
// with no comparison of interfaces (errors.Is on a rejection: 0.6 ns of 7).
type errOpen struct{}

func (errOpen) Error() string { return "circuit open" }

// OpenError is returned, without running the operation, by a call to a circuit
// that is open, or half-open with another caller's probe in flight. Calls
// rejected for the same record may share one OpenError: treat it as
// read-only. An observe-only circuit returns none: its observers hear the
// OpenError of each call it would have rejected, with ObserveOnly set.
type OpenError struct {
	// Name is the circuit's name.
	Name string
	// State is StateOpen, or StateHalfOpen while a probe is in flight.
	State State
	// Until is when the circuit may admit a call again: the end of the
	// cooldown, or of the probe's lease, by the store's clock.
	Until time.Time
	// Forced reports that an operator holds the circuit open
	// (Breaker.ForceOpen) until Until.
	Forced bool
	// ObserveOnly reports that the circuit only observes
	// (Policy.ObserveOnly, WithObserveOnly): the call was not rejected but
	// ran outside the circuit's state.
	ObserveOnly bool

	retryAfter time.Duration // as of the rejection, when due is zero
	due        time.Time     // the deadline on the monotonic clock, or zero
}

// RetryAfter is how long to wait before calling again: until the recorded
// deadline, rounded up to the millisecond, and at least one second. On a
// store whose processes share the local clock (the file store), it is the
// time left when RetryAfter is called; on one with its own clock, or a
// Breaker with an injected clock, the time left when the call was rejected.
func (e *OpenError) RetryAfter() time.Duration {
	if !e.due.IsZero() {
		return machine.RetryAfter(time.Until(e.due))
	}
	return max(time.Second, e.retryAfter)
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, at least 1, as
// an HTTP Retry-After header wants it.
func (e *OpenError) RetryAfterSeconds() int {
	return int((e.RetryAfter() + time.Second - 1) / time.Second)
}

// Error describes the rejection.
func (e *OpenError) Error() string {
	what := "open"
	if e.Forced {
		what = "forced open"
	}
	if e.State == StateHalfOpen {
		what = "half-open with a probe in flight"
	}
	if e.ObserveOnly {
		return fmt.Sprintf("circuit %s is %s (observe only: the call ran)", e.Name, what)
	}
	return fmt.Sprintf("circuit %s is %s: retry after %ds", e.Name, what, e.RetryAfterSeconds())
}

// Is reports whether target is ErrOpen.
func (e *OpenError) Is(target error) bool {
	_, ok := target.(errOpen)
	return ok
}

// StateError reports that a circuit's state could not be read or written:
// the store is unreachable, unwritable, or holds a corrupt record. The
// Breaker fails closed: no new operation is admitted.
//
// When settling fails after the operation ran, the StateError is returned in
// place of the operation's own error, which stays reachable through CallErr
// and errors.Is/As: the operation's side effect may have happened, and the
// circuit can no longer vouch for its state, so do not retry blindly.
type StateError struct {
	// Name is the circuit's name.
	Name string
	// Op is what failed: "load", "replace", "delete" or "window" (the
	// window counts of the rate rule).
	Op string
	// Err is the store's error.
	Err error
	// CallErr is the operation's own error, when the operation ran before
	// settling failed.
	CallErr error
	// Ran reports whether the operation ran before the failure.
	Ran bool
}

// Error describes the failure.
func (e *StateError) Error() string {
	s := fmt.Sprintf("circuit %s: state %s: %v", e.Name, e.Op, e.Err)
	switch {
	case e.Ran && e.CallErr != nil:
		return fmt.Sprintf("%s (after the operation ran; it returned: %v)", s, e.CallErr)
	case e.Ran:
		return s + " (after the operation ran)"
	}
	return s
}

// Unwrap returns the store's error and the operation's own error, if any.
func (e *StateError) Unwrap() []error {
	if e.CallErr != nil {
		return []error{e.Err, e.CallErr}
	}
	return []error{e.Err}
}

// Corrupt reports whether the record exists but is corrupt; Breaker.Clear
// removes it.
func (e *StateError) Corrupt() bool { return errors.Is(e.Err, driver.ErrCorrupt) }

// ConfigError reports an invalid circuit name or policy. It is returned
// before any I/O and before the operation runs.
type ConfigError struct {
	// Field is "name" or the Policy field at fault.
	Field string
	// Value is the offending value, as text.
	Value string
	// Reason says what is wrong.
	Reason string
}

// Error describes the invalid configuration.
func (e *ConfigError) Error() string {
	if e.Value == "" {
		return "circuit: invalid " + e.Field + ": " + e.Reason
	}
	return fmt.Sprintf("circuit: invalid %s %q: %s", e.Field, e.Value, e.Reason)
}
