package circuit

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Ticket is an admitted call in the two-step form, for code that cannot wrap
// the operation in a closure: Allow admits, the caller runs the operation,
// and Done settles it exactly once.
type Ticket struct {
	c      *Circuit
	ctx    context.Context
	p      *machine.Policy
	grant  machine.Grant
	passed bool          // an observe-only circuit let the call pass unadmitted
	start  time.Duration // when the call was admitted (Breaker.since), when timed
	timed  bool          // Policy.SlowCall or an observer of outcomes needs the time
	done   atomic.Bool   // set by the first Done; Done may race with itself
}

// ticket admits one call to the circuit under p and returns its Ticket.
func (c *Circuit) ticket(ctx context.Context, p *machine.Policy) (*Ticket, error) {
	t := new(Ticket)
	if err := c.enter(ctx, p, t); err != nil {
		return nil, err
	}
	return t, nil
}

// enter admits one call to the circuit under p into t, or says why not.
// An observe-only circuit lets a call it rejects, or a StateError stops,
// pass unadmitted.
func (c *Circuit) enter(ctx context.Context, p *machine.Policy, t *Ticket) error {
	*t = Ticket{c: c, ctx: ctx, p: p}
	if err := c.allow(ctx, p, &t.grant); err != nil {
		switch err.(type) {
		case *OpenError, *StateError:
			if t.passed = p.ObserveOnly; t.passed {
				return nil
			}
		}
		return err
	}
	if t.timed = p.SlowCall > 0 || c.p.b.obs.calls; t.timed {
		t.start = c.p.b.since()
	}
	return nil
}

// Probe reports whether the ticket is the circuit's half-open probe.
func (t *Ticket) Probe() bool { return t.grant.Probe }

// Done settles the call with its outcome; under Policy.SlowCall, a Success
// that comes later than SlowCall after Allow counts as a Failure. Only the
// first call has an effect. A *StateError means the circuit could not
// record it.
func (t *Ticket) Done(o Outcome) error {
	if !t.done.CompareAndSwap(false, true) {
		return nil
	}
	return t.finish(o, nil)
}

// finish settles the call of t, whose operation returned opErr: it
// returns opErr, or the StateError of a settlement that failed after it ran.
func (t *Ticket) finish(o Outcome, opErr error) error {
	if t.passed {
		return opErr
	}
	var d time.Duration
	if t.timed {
		d = t.c.p.b.since() - t.start
	}
	if err := t.c.settle(t.ctx, t.p, &t.grant, t.p.Classify(machine.Outcome(o), d), d); err != nil && !t.p.ObserveOnly {
		if se, ok := errors.AsType[*StateError](err); ok {
			se.Ran, se.CallErr = true, opErr // it failed after the operation ran
		}
		return err
	}
	return opErr
}
