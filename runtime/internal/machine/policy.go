package machine

import (
	"fmt"
	"strconv"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Policy is the rules of circuit.Policy that the state machine applies. Its
// fields are circuit.Policy's, in the same order, so that one converts to the
// other; circuit.Policy documents them, and Faults checks their bounds.
type Policy struct {
	FailureThreshold int
	FailureRate      float64
	MinCalls         int
	Window           time.Duration
	WindowCalls      int
	SlowCall         time.Duration
	Cooldown         time.Duration
	MaxCooldown      time.Duration
	ProbeLease       time.Duration
	CloseAfter       int
	ObserveOnly      bool
}

// The bounds of a Policy's fields, as circuit.Policy's docs give them.
const (
	MinCooldown   = time.Second
	MaxCooldown   = 24 * time.Hour
	maxProbeLease = time.Hour
)

// A Fault is a field of a Policy out of its bounds.
type Fault struct {
	Field  string
	Value  any
	Reason string
}

// Faults returns each field of p, with its defaults set, that is out of its
// bounds.
func (p Policy) Faults() []Fault {
	var fs []Fault
	check := func(bad bool, field string, value any, reason string) {
		if bad {
			fs = append(fs, Fault{field, value, reason})
		}
	}
	rate := p.FailureRate != 0
	check((p.FailureThreshold != 0 || !rate) && !within(p.FailureThreshold, 1, driver.MaxFailures),
		"FailureThreshold", p.FailureThreshold, "must be within 1..1000")
	check(rate && !(p.FailureRate > 0 && p.FailureRate <= 1), "FailureRate", p.FailureRate, "must be within (0, 1]")
	check((rate || p.MinCalls != 0) && !within(p.MinCalls, 1, 1_000_000),
		"MinCalls", p.MinCalls, "must be within 1..1000000 (required with FailureRate)")
	switch {
	case p.Window != 0 && p.WindowCalls != 0:
		check(true, "WindowCalls", p.WindowCalls, fmt.Sprintf("must be 0 when Window (%v) is set: a window is of time or of calls", p.Window))
	case !within(p.WindowCalls, 0, driver.MaxWindowCalls):
		check(true, "WindowCalls", p.WindowCalls, "must be within 1..10000")
	case p.WindowCalls != 0:
		check(rate && p.MinCalls > p.WindowCalls, "MinCalls", p.MinCalls, fmt.Sprintf("must be at most WindowCalls (%d)", p.WindowCalls))
	case rate || p.Window != 0:
		check(!within(p.Window, time.Second, time.Hour), "Window", p.Window, "must be within 1s..1h (FailureRate requires Window or WindowCalls)")
	}
	check(p.SlowCall < 0, "SlowCall", p.SlowCall, "must not be negative (0 means off)")
	check(!within(p.Cooldown, MinCooldown, MaxCooldown), "Cooldown", p.Cooldown, "must be within 1s..24h")
	check(p.MaxCooldown != 0 && !within(p.MaxCooldown, p.Cooldown, MaxCooldown), "MaxCooldown", p.MaxCooldown,
		fmt.Sprintf("must be within Cooldown (%v)..24h, or 0 for a cooldown that never grows", p.Cooldown))
	check(!within(p.ProbeLease, time.Second, maxProbeLease), "ProbeLease", p.ProbeLease, "must be within 1s..1h")
	check(!within(p.CloseAfter, 0, driver.MaxSuccesses+1), "CloseAfter", p.CloseAfter, "must be within 0..100 (0 and 1 both mean one)")
	return fs
}

// within reports whether lo <= v <= hi.
func within[T int | time.Duration](v, lo, hi T) bool { return lo <= v && v <= hi }

// RetryAfter is how long a call rejected with left to go should wait:
// rounded up to the millisecond, at least one second, and at most the
// longest cooldown and lease, even when a recorded deadline is far away (a
// clock that stepped back).
func RetryAfter(left time.Duration) time.Duration {
	if left > MaxCooldown+maxProbeLease {
		return MaxCooldown + maxProbeLease
	}
	left = (left + time.Millisecond - 1).Truncate(time.Millisecond)
	return max(left, time.Second)
}

// Landed reports whether stored is tried, a record whose write the store
// refused (it may have landed): every field the same, its times the same
// instants.
func Landed(stored, tried *driver.Record) bool {
	if stored == nil || !stored.UpdatedAt.Equal(tried.UpdatedAt) || !stored.OpenUntil.Equal(tried.OpenUntil) ||
		!stored.LeaseUntil.Equal(tried.LeaseUntil) {
		return false
	}
	s, t := *stored, *tried
	s.UpdatedAt, s.OpenUntil, s.LeaseUntil = t.UpdatedAt, t.OpenUntil, t.LeaseUntil
	return s == t
}

// Outcome is a classified call: circuit.Outcome, with the same values.
type Outcome uint8

// The outcomes, as circuit defines them.
const (
	Ignored Outcome = iota
	Success
	Failure
)

// Classify returns the outcome a call that took d counts as: a Success
// slower than SlowCall (when set) is a Failure; every other outcome is
// itself.
func (p Policy) Classify(o Outcome, d time.Duration) Outcome {
	if o == Success && p.SlowCall > 0 && d > p.SlowCall {
		return Failure
	}
	return o
}

// Trips reports whether window counts w open the circuit under the rate
// rule: FailureRate is set, w holds at least MinCalls calls, and
// failures/calls >= FailureRate.
func (p Policy) Trips(w driver.Counts) bool {
	return p.FailureRate > 0 && w.Calls >= uint64(max(p.MinCalls, 1)) &&
		float64(w.Failures)/float64(w.Calls) >= p.FailureRate
}

// CooldownAfter returns the cooldown of a circuit that half-open probes
// reopened reopens times since it last closed: Cooldown doubled reopens
// times, at most MaxCooldown; always Cooldown when MaxCooldown is 0.
func (p Policy) CooldownAfter(reopens int) time.Duration {
	d := p.Cooldown
	for range reopens {
		if d >= p.MaxCooldown {
			break
		}
		d *= 2
	}
	return max(p.Cooldown, min(d, p.MaxCooldown))
}

// String returns "ignored", "success" or "failure".
func (o Outcome) String() string {
	switch o {
	case Ignored:
		return "ignored"
	case Success:
		return "success"
	case Failure:
		return "failure"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}
