package circuit

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Ticket is an admitted call in the two-step form, for code that cannot wrap
// the operation in a closure: Allow admits, the caller runs the operation,
// and Done settles it exactly once.
type Ticket struct {
	b      *Breaker
	ctx    context.Context
	ref    *ref
	policy *machine.Policy
	grant  admission
	passed bool          // an observe-only circuit let the call pass unadmitted
	start  time.Duration // when the call was admitted (Breaker.start), for Policy.SlowCall and the CallObservers
	timed  bool          // whether start is set
	done   atomic.Bool   // set by the first Done; Done may race with itself
}

// Allow admits one call to the named circuit under policy p, or returns the
// same errors as Run does before the operation. Every Ticket must be settled
// with Done; an unsettled probe holds its claim until its lease expires. An
// observe-only circuit returns a Ticket for a call it would reject: the
// call runs outside the circuit's state, and its Done changes nothing.
func (b *Breaker) Allow(ctx context.Context, name string, p Policy) (*Ticket, error) {
	r, rules, err := b.bind(name, p)
	if err != nil {
		return nil, err
	}
	return b.admit(ctx, r, rules)
}

// admit admits one call to the circuit of r under rules and returns its
// Ticket.
func (b *Breaker) admit(ctx context.Context, r *ref, rules *machine.Policy) (*Ticket, error) {
	var g admission
	if err := b.allow(ctx, r, rules, &g); err != nil {
		if passes(rules, err) {
			return &Ticket{b: b, ctx: ctx, ref: r, policy: rules, passed: true}, nil
		}
		return nil, err
	}
	t := &Ticket{b: b, ctx: ctx, ref: r, policy: rules, grant: g, timed: rules.SlowCall > 0 || b.calls != nil}
	if t.timed {
		t.start = b.start()
	}
	return t, nil
}

// Probe reports whether the ticket is the circuit's half-open probe.
func (t *Ticket) Probe() bool { return t.grant.Probe }

// Done settles the call with its outcome; under Policy.SlowCall, a Success
// that comes later than SlowCall after Allow counts as a Failure. Only the
// first call has an effect. A *StateError means the circuit could not
// record it.
func (t *Ticket) Done(o Outcome) error {
	if !t.done.CompareAndSwap(false, true) || t.passed {
		return nil
	}
	d := t.b.took(t.timed, t.start)
	outcome := machine.Outcome(o)
	if t.policy.SlowCall > 0 {
		outcome = t.policy.Classify(outcome, d)
	}
	if err := t.b.settle(t.ctx, t.ref, t.policy, &t.grant, outcome, d); err != nil && !t.policy.ObserveOnly {
		return ranError(err, nil)
	}
	return nil
}
