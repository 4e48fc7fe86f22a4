package circuit

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Circuit is a named circuit and its policy, validated and bound to the
// store once: the prepared form of Breaker.Run for code that calls the same
// circuit again and again, such as generated guarded clients.
type Circuit struct {
	b     *Breaker
	name  string
	p     *bound // nil when err is set
	err   error  // the *ConfigError of an invalid name or policy
	store driver.BoundStore
	watch driver.Watcher // store, when it vouches for the records it loads

	kept atomic.Pointer[kept]      // the record last loaded, with its Watch
	rej  atomic.Pointer[rejection] // the latest rejection (reject.go)
	owed atomic.Pointer[owed]      // a settlement the store refused (owed.go)
	more atomic.Pointer[more]      // what only some circuits use (window.go)
}

// kept is a record a Watcher loaded, and the Watch that vouches for it.
type kept struct {
	rec *driver.Record
	w   driver.Watch
}

// Circuit returns the named circuit under policy p. An invalid name or
// policy is reported, as a *ConfigError, by every call of the Circuit.
func (b *Breaker) Circuit(name string, p Policy) *Circuit {
	b.mu.RLock()
	c := b.circuits[name]
	b.mu.RUnlock()
	if c != nil && c.p != nil && c.p.policy == p {
		return c
	}
	if err := ValidateName(name); err != nil {
		return &Circuit{b: b, name: name, err: err}
	}
	v, err := b.validated(p)
	if err != nil {
		return &Circuit{b: b, name: name, err: err}
	}
	c = b.newCircuit(name, v)
	if kept := b.keep(c); kept.p == v {
		return kept
	}
	return c
}

// newCircuit returns a handle of the named circuit, a valid name, under v
// (nil: none yet), bound to the store.
func (b *Breaker) newCircuit(name string, v *bound) *Circuit {
	c := &Circuit{b: b, name: name, p: v}
	if b.binder != nil {
		c.store = b.binder.Bind(name)
	} else {
		c.store = &named{store: b.store, name: name}
	}
	c.watch, _ = c.store.(driver.Watcher)
	return c
}

// Breaker returns the Breaker the circuit belongs to: generated clients
// guard the interfaces their methods return on it.
func (c *Circuit) Breaker() *Breaker { return c.b }

// Name returns the circuit's name.
func (c *Circuit) Name() string { return c.name }

// Run runs op through the circuit, exactly as Breaker.Run does.
func (c *Circuit) Run(ctx context.Context, op func(context.Context) (Outcome, error)) error {
	if c.p == nil {
		return c.err
	}
	// The healthy call: a clean record (machine.Clean) that the store
	// still vouches for admits the call, and a Success of it leaves the
	// record as it is, with nothing to decide, no clock and no call into
	// the store. Only a policy with nothing else to do on the call (no rate
	// rule to count it, no slow-call rule to time it, no observer of calls)
	// takes it.
	k := c.kept.Load()
	if k != nil && !k.w.Holds() {
		k = nil
	}
	if k != nil && c.p.plain && machine.Clean(k.rec) && c.owed.Load() == nil {
		o, err := op(ctx)
		if o == Success && c.kept.Load() == k && k.w.Holds() {
			return err
		}
		g := machine.GrantOf(k.rec)
		return c.settled(ctx, &c.p.rules, &g, o, err, 0)
	}
	return c.run(ctx, &c.p.rules, k, op)
}

// Allow admits one call to the circuit in the two-step form, exactly as
// Breaker.Allow does: for an operation whose outcome is known only after
// it returns, such as a row whose Scan reports the query's error or an
// iterator. Every Ticket must be settled with Done.
func (c *Circuit) Allow(ctx context.Context) (*Ticket, error) {
	if c.p == nil {
		return nil, c.err
	}
	return c.ticket(ctx, &c.p.rules)
}

// run runs op through the circuit under p; k is the circuit's kept record
// when its Watch holds, else nil.
func (c *Circuit) run(ctx context.Context, p *machine.Policy, k *kept, op func(context.Context) (Outcome, error)) error {
	var g machine.Grant
	if err := c.allow(ctx, p, k, &g); err != nil {
		if passes(p, err) {
			_, opErr := op(ctx)
			return opErr
		}
		return err
	}
	// The call is timed only when something reads the time: the slow-call
	// rule, or an observer of calls.
	timed := p.SlowCall > 0 || c.b.obs.calls
	var start time.Duration
	if timed {
		start = c.b.since()
	}
	took := func() time.Duration {
		if !timed {
			return 0
		}
		return c.b.since() - start
	}
	// A panic of op settles the call as Ignored, which changes nothing for
	// a call admitted closed: only a probe's, or one the observers hear of,
	// is settled on the way out.
	if g.Probe || c.b.obs.calls {
		settled := false
		defer func() {
			if !settled { // op panicked: settle, then let the panic go on
				_ = c.settle(ctx, p, &g, machine.Ignored, took())
			}
		}()
		o, opErr := op(ctx)
		settled = true
		return c.settled(ctx, p, &g, o, opErr, took())
	}
	o, opErr := op(ctx)
	return c.settled(ctx, p, &g, o, opErr, took())
}

// settled settles the call admitted with g, whose op returned o and opErr
// after d, and returns what the call returns.
func (c *Circuit) settled(ctx context.Context, p *machine.Policy, g *machine.Grant, o Outcome, opErr error, d time.Duration) error {
	if err := c.settle(ctx, p, g, p.Classify(machine.Outcome(o), d), d); err != nil && !p.ObserveOnly {
		return ranError(err, opErr)
	}
	return opErr
}

// passes reports whether a call that allow refused with err runs anyway:
// the circuit is observe-only, and err is the circuit's (a rejection or a
// StateError), not the caller's context ending.
func passes(p *machine.Policy, err error) bool {
	if !p.ObserveOnly {
		return false
	}
	switch err.(type) {
	case *OpenError, *StateError:
		return true
	}
	return false
}

// ranError marks a settlement failure as happening after the operation ran.
func ranError(err, opErr error) error {
	if se, ok := errors.AsType[*StateError](err); ok {
		se.Ran = true
		se.CallErr = opErr
	}
	return err
}

// allow admits a call under p, setting *g, or says why not; k is the
// circuit's kept record when its Watch holds, else nil. ctx is asked only
// when the store is: a kept record decides without it. A decision that
// writes (a probe's claim) is made again in update, which stores it.
func (c *Circuit) allow(ctx context.Context, p *machine.Policy, k *kept, g *machine.Grant) error {
	ow := c.owed.Load()
	if ow != nil || k == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if ow != nil {
		if err := c.repay(ctx, ow); err != nil {
			return err
		}
		k = nil
	}
	var v view
	v.clk.Reset(c.b.read)
	v.local = c.b.local
	if k != nil {
		v.rec = k.rec
	} else if err := c.load(ctx, &v); err != nil {
		return err
	}
	var a machine.Admission
	rejected := c.admit(&v, p, &a)
	if rejected == nil && a.Next != nil {
		err := c.update(ctx, false, &v, func(v view) (*driver.Record, error) {
			rejected = c.admit(&v, p, &a)
			return a.Next, nil
		})
		if err != nil {
			return err
		}
	}
	if rejected != nil {
		c.b.obs.rejected(ctx, rejected)
		return rejected
	}
	*g = a.Grant
	return nil
}

// admit puts the machine's decision on v's record under p in *a, and
// returns the OpenError when it is a rejection.
func (c *Circuit) admit(v *view, p *machine.Policy, a *machine.Admission) *OpenError {
	rj := c.rej.Load()
	machine.Admit(v.rec, p, &v.clk, driver.NewID, a)
	if !a.Admitted {
		return c.rejection(v, rj, a, p.ObserveOnly)
	}
	return nil
}

// settle records a call's outcome, already classified (Policy.Classify);
// d is how long the call took, for the observers. A refused write makes the
// circuit owe it (owed.go).
func (c *Circuit) settle(ctx context.Context, p *machine.Policy, g *machine.Grant, o machine.Outcome, d time.Duration) error {
	c.b.obs.outcome(ctx, c.name, Outcome(o), d)
	if o == machine.Ignored && !g.Probe {
		return nil // an ignored call in the closed state changes nothing
	}
	var a attempt
	err := c.record(ctx, p, g, o, &a)
	if err != nil {
		c.owe(p, g, o, &a, err)
	}
	return err
}

// attempt is what record tried: kept for a settlement the store refused,
// so that writing it again decides as of the same time, and is not made
// twice when the refused write landed after all.
type attempt struct {
	counted bool           // the outcome is counted in the rate rule's window
	clk     machine.Clock  // the decision's clock
	tried   *driver.Record // the record it tried to store
}

// record applies outcome o of the call of g to the circuit's record,
// counting it in the rate rule's window first unless a.counted is set. A
// clock a gives (a.clk read) decides in place of the Breaker's. The
// operation has returned, so every write runs detached from ctx's
// cancellation (update).
func (c *Circuit) record(ctx context.Context, p *machine.Policy, g *machine.Grant, o machine.Outcome, a *attempt) error {
	given := a.clk.Read()
	return c.update(ctx, true, nil, func(v view) (*driver.Record, error) {
		if given {
			v.clk = a.clk
		}
		var w driver.Counts
		if p.FailureRate > 0 && machine.Counted(v.rec, g, &v.clk) {
			var err error
			if w, err = c.count(ctx, p, &v, o, !a.counted); err != nil {
				return nil, err
			}
			a.counted = true
		}
		a.tried = machine.Settle(v.rec, c.name, g, o, p, &v.clk, w)
		a.clk = v.clk
		return a.tried, nil
	})
}

// view is a record as loaded for a decision, and the decision's clock.
type view struct {
	rec   *driver.Record
	clk   machine.Clock
	local bool // clk is the local one (the store gave no time): an OpenError's RetryAfter counts down
}

// update loads the circuit's record, asks decide for the record to store in
// its place (nil: nothing to store) and stores it, deciding again on the
// record a concurrent writer stored instead. A view first, when given, is
// the record just loaded: the first decision is made on it, without a load. It is the one loop of the
// Breaker's I/O: every rule is decided by decide, through the machine.
// With settling, it runs every write, and every load after the first,
// detached from ctx's cancellation: the operation ran, and its outcome is
// recorded even when the caller's context ends meanwhile.
func (c *Circuit) update(ctx context.Context, settling bool, first *view, decide func(view) (*driver.Record, error)) error {
	var cancel context.CancelFunc // set once detached
	defer func() {
		if cancel != nil {
			cancel()
		}
	}()
	detachOnce := func() {
		if settling && cancel == nil {
			ctx, cancel = detach(ctx)
		}
	}
	for range maxConflicts {
		if err := ctx.Err(); err != nil && !settling {
			return err
		}
		var v view
		var err error
		if first != nil {
			v, first = *first, nil
		} else {
			err = c.load(ctx, &v)
		}
		if err != nil && settling && cancel == nil && ctx.Err() != nil {
			detachOnce() // the caller's context ended: load again, detached
			err = c.load(ctx, &v)
		}
		if err != nil {
			return err
		}
		next, err := decide(v)
		if err != nil || next == nil {
			return err
		}
		detachOnce()
		if ok, err := c.replace(ctx, v.rec, next); err != nil || ok {
			return err
		}
	}
	return c.stateError("replace", fmt.Errorf("gave up after %d concurrent changes", maxConflicts))
}

// load loads the circuit's record into v: the kept one while its Watch
// holds, else the store's, kept when the store vouches for it.
func (c *Circuit) load(ctx context.Context, v *view) error {
	v.clk.Reset(c.b.read)
	v.local = c.b.local
	if k := c.kept.Load(); k != nil && k.w.Holds() {
		v.rec = k.rec
		return nil
	}
	if c.watch != nil {
		rec, w, err := c.watch.LoadWatched(ctx)
		if err != nil {
			return c.stateError("load", err)
		}
		if w != (driver.Watch{}) {
			c.kept.Store(&kept{rec: rec, w: w})
		}
		v.rec = rec
		return nil
	}
	rec, now, err := c.store.Load(ctx)
	if err != nil {
		return c.stateError("load", err)
	}
	v.rec = rec
	if !now.IsZero() && c.b.clock == nil {
		v.clk, v.local = *machine.At(now), false
	}
	return nil
}

// replace stores next over prev. It reports false on a conflict.
func (c *Circuit) replace(ctx context.Context, prev, next *driver.Record) (bool, error) {
	err := c.store.Replace(ctx, prev, next)
	switch {
	case err == nil:
		c.b.obs.transition(ctx, prev, next)
		return true, nil
	case errors.Is(err, driver.ErrConflict):
		return false, nil
	}
	return false, c.stateError("replace", err)
}

// named binds a circuit of a Store that is not a Binder.
type named struct {
	store Store
	name  string
}

func (n *named) Load(ctx context.Context) (*driver.Record, time.Time, error) {
	return n.store.Load(ctx, n.name)
}

func (n *named) Replace(ctx context.Context, prev, next *driver.Record) error {
	return n.store.Replace(ctx, n.name, prev, next)
}

func (n *named) Delete(ctx context.Context) error { return n.store.Delete(ctx, n.name) }
