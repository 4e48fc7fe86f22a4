package machine

import (
	"strconv"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Policy is the rules of circuit.Policy that the state machine applies. Its
// fields are circuit.Policy's, in the same order, so that one converts to the
// other; circuit.Policy documents them and checks their bounds.
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
