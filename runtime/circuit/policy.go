package circuit

import (
	"errors"
	"fmt"
	"time"

	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// DefaultPolicy is the policy of a circuit whose directive, manifest or
// caller sets nothing: five consecutive failures open it for thirty seconds,
// and a half-open probe holds its claim for ten; every other rule is off.
// The generator, its templates and the README read the defaults here.
var DefaultPolicy = Policy{
	FailureThreshold: 5,
	Cooldown:         30 * time.Second,
	ProbeLease:       10 * time.Second,
}

// Policy is what a circuit does with classified outcomes: which rules open
// it, how long it stays open, and how a half-open circuit closes again.
// Either opening rule opens the circuit: the consecutive rule
// (FailureThreshold) and the rate rule (FailureRate). A zero field is off
// unless its doc says otherwise; the zero Policy is DefaultPolicy.
type Policy struct {
	// FailureThreshold is the number of consecutive failures, 1..1000, that
	// opens a closed circuit. 0 turns the consecutive rule off when
	// FailureRate is set, and is DefaultPolicy's threshold otherwise.
	FailureThreshold int
	// FailureRate, 0 < r <= 1, opens a closed circuit when its window (the
	// last Window, or the last WindowCalls calls) holds at least MinCalls
	// completed calls (Success or Failure; an Ignored call never counts)
	// and failures/calls >= r. 0 turns the rate rule off.
	FailureRate float64
	// MinCalls, 1..1000000 (at most WindowCalls), is how many completed
	// calls the window must hold before FailureRate can open the circuit,
	// so that one failure in a quiet minute does not. Required when
	// FailureRate is set; with FailureRate zero it does nothing.
	MinCalls int
	// Window, 1s..1h, is the span of recent time whose calls FailureRate
	// looks at. FailureRate requires exactly one of Window and WindowCalls;
	// with FailureRate zero it does nothing.
	Window time.Duration
	// WindowCalls, 1..10000, makes FailureRate look at the last WindowCalls
	// completed calls, whenever they came, instead of a span of time. On a
	// store that does not keep count windows itself (the distributed
	// stores), each process counts its own last calls.
	WindowCalls int
	// SlowCall, when positive, makes a Success that took longer than it
	// (measured by the Breaker around the operation) count as a Failure, for
	// both rules and for a half-open probe. 0 means no call is slow.
	SlowCall time.Duration
	// Cooldown, 1s..24h, is how long an open circuit rejects calls before
	// it admits one half-open probe; 0 is DefaultPolicy's.
	Cooldown time.Duration
	// MaxCooldown, Cooldown..24h, lets the cooldown grow: each time a
	// half-open probe fails and reopens the circuit, the cooldown doubles,
	// up to MaxCooldown; closing the circuit resets it to Cooldown. 0 means
	// the cooldown never grows.
	MaxCooldown time.Duration
	// ProbeLease, 1s..1h, bounds a half-open probe's claim: when a probe
	// neither succeeds nor fails within it (it crashed, or hangs), the next
	// caller claims a new probe; 0 is DefaultPolicy's.
	ProbeLease time.Duration
	// CloseAfter, 0..100, is how many half-open probes must succeed in a
	// row to close the circuit; the probes still run one at a time across
	// every process sharing the store, and any probe failure reopens it.
	// 0 and 1 both mean one.
	CloseAfter int
	// ObserveOnly makes the circuit decide, record and report as it would,
	// but never reject: a call it would reject, or a StateError would stop,
	// runs anyway, outside its state. Observers hear the *OpenError, with
	// ObserveOnly set, and the StateError. WithObserveOnly does the same
	// for every circuit of a Breaker.
	ObserveOnly bool
}

// Validate reports every field of p that is out of its bounds, as one
// *ConfigError per field joined with errors.Join (errors.As finds the
// first). It returns nil when p is valid.
func (p Policy) Validate() error {
	var errs []error
	for _, f := range p.rules().Faults() {
		errs = append(errs, &ConfigError{Field: f.Field, Value: fmt.Sprint(f.Value), Reason: f.Reason})
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// withDefaults returns p with DefaultPolicy's value in each zero field that
// has a default.
func (p Policy) withDefaults() Policy {
	if p.FailureThreshold == 0 && p.FailureRate == 0 {
		p.FailureThreshold = DefaultPolicy.FailureThreshold
	}
	if p.Cooldown == 0 {
		p.Cooldown = DefaultPolicy.Cooldown
	}
	if p.ProbeLease == 0 {
		p.ProbeLease = DefaultPolicy.ProbeLease
	}
	return p
}

// rules returns the state machine's form of p.
func (p Policy) rules() machine.Policy { return machine.Policy(p.withDefaults()) }
