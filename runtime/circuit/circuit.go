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
	kept atomic.Pointer[kept] // the record last loaded from a driver.Watcher, with its Watch
	p    *bound               // the Breaker and the policy
	// first is the first kept record, written once, in the Circuit's memory:
	// one allocation and cache miss fewer (BENCHMARKS.md, 100,000 circuits).
	first kept
	name  string
	more  atomic.Pointer[more] // what only some circuits use (more.go)
}

// kept is a record a driver.Watcher loaded, its Watch, and what its standing
// decision (machine.StandingOf) lets Quiet do under the Circuit's policy.
type kept struct {
	w     driver.Watch
	quiet bool
	count bool        // a quiet Success is counted in the rate rule's window (Quiet.Settle)
	used  atomic.Bool // for a Circuit's first: it is taken (keep)
	rej   *rejection
	rec   *driver.Record
}

// Circuit returns the named circuit under policy p. An invalid name or
// policy is reported, as a *ConfigError, by every call of the Circuit.
func (b *Breaker) Circuit(name string, p Policy) *Circuit {
	c, v, err := b.bind(name, p)
	switch {
	case err != nil:
		return &Circuit{name: name, p: &bound{b: b, err: err}}
	case c.p != v:
		return b.newCircuit(name, v) // the name's first handle has another policy
	}
	return c
}

// newCircuit returns a handle of the named circuit, a valid name, under v
// (Breaker.unset: no policy yet).
func (b *Breaker) newCircuit(name string, v *bound) *Circuit {
	c := &Circuit{name: name, p: v}
	if b.binder != nil {
		c.more.Store(&more{bound: b.binder.Bind(name)})
	}
	return c
}

// Breaker returns the Breaker the circuit belongs to: generated clients
// guard the interfaces their methods return on it.
func (c *Circuit) Breaker() *Breaker { return c.p.b }

// Name returns the circuit's name.
func (c *Circuit) Name() string { return c.name }

// Run runs op through the circuit, exactly as Breaker.Run does.
func (c *Circuit) Run(ctx context.Context, op func(context.Context) (Outcome, error)) error {
	if q := c.Quiet(); q.Admitted() { // the one shortcut (quiet.go)
		o, err := op(ctx)
		if !q.Settled(o) {
			err = q.Settle(ctx, o, err)
		}
		return err
	} else if err := q.Rejected(); err != nil {
		return err
	}
	if !c.p.set {
		return c.p.err
	}
	return c.run(ctx, &c.p.rules, op)
}

// Allow admits one call to the circuit in the two-step form, exactly as
// Breaker.Allow does: for an operation whose outcome is known only after
// it returns, such as a row whose Scan reports the query's error or an
// iterator. Every Ticket must be settled with Done.
func (c *Circuit) Allow(ctx context.Context) (*Ticket, error) {
	if !c.p.set {
		return nil, c.p.err
	}
	return c.ticket(ctx, &c.p.rules)
}

// run runs op through the circuit under p, as the call of a Ticket.
func (c *Circuit) run(ctx context.Context, p *machine.Policy, op func(context.Context) (Outcome, error)) error {
	var t Ticket
	if err := c.enter(ctx, p, &t); err != nil {
		return err
	}
	// A panic of op settles the call as Ignored, then goes on.
	settled := false
	defer func() {
		if !settled {
			_ = t.finish(Ignored, nil)
		}
	}()
	o, opErr := op(ctx)
	settled = true
	return t.finish(o, opErr)
}

// allow admits a call under p into *g, or says why not. ctx is asked only
// when the store is. A decision that writes (a probe's claim) is made again
// in update, which stores it.
func (c *Circuit) allow(ctx context.Context, p *machine.Policy, g *machine.Grant) error {
	if c.owing() != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.repay(ctx, false); err != nil {
			return err
		}
	}
	var v view
	if err := c.load(ctx, &v); err != nil {
		return err
	}
	var a machine.Admission
	rejected := c.admit(&v, p, &a)
	if rejected == nil && a.Next != nil {
		if err := c.update(ctx, false, &v, func(v view) (*driver.Record, error) {
			rejected = c.admit(&v, p, &a)
			return a.Next, nil
		}); err != nil {
			return err
		}
	}
	if rejected != nil {
		c.p.b.obs.rejected(ctx, rejected)
		return rejected
	}
	*g = a.Grant
	return nil
}

// admit puts the machine's decision on v's record under p in *a, and
// returns the OpenError when it is a rejection.
func (c *Circuit) admit(v *view, p *machine.Policy, a *machine.Admission) *OpenError {
	machine.Admit(v.rec, p, &v.clk, driver.NewID, a)
	if !a.Admitted {
		return c.rejection(v, a, p.ObserveOnly)
	}
	return nil
}

// settle records a call's classified outcome; d is how long it took, for
// the observers. A refused write makes the circuit owe it (owed.go).
func (c *Circuit) settle(ctx context.Context, p *machine.Policy, g *machine.Grant, o machine.Outcome, d time.Duration) error {
	c.p.b.obs.outcome(ctx, c.name, Outcome(o), d)
	if o == machine.Ignored && !g.Probe {
		return nil // an ignored call in the closed state changes nothing
	}
	if c.owing() != nil {
		_ = c.repay(ctx, true) // what is owed first: this settlement lands on it
	}
	var a attempt
	err := c.record(ctx, true, p, g, o, &a)
	if err != nil {
		c.owe(p, g, o, &a, err)
	}
	return err
}

// attempt is what record tried, kept for a settlement the store refused:
// written again, it is not made twice if the refused write landed.
type attempt struct {
	counted bool           // the outcome is counted in the rate rule's window
	clk     machine.Clock  // the decision's clock
	tried   *driver.Record // the record it tried to store
	refused *driver.Record // a tried record the store refused, which may have landed
}

// record applies outcome o of the call of g to the circuit's record,
// counting it in the rate rule's window first unless a.counted is set. A
// clock a gives (a.clk read) decides in place of the Breaker's. With
// settling, it runs detached from ctx's cancellation (update).
func (c *Circuit) record(ctx context.Context, settling bool, p *machine.Policy, g *machine.Grant, o machine.Outcome, a *attempt) error {
	given := a.clk.Read()
	return c.update(ctx, settling, nil, func(v view) (*driver.Record, error) {
		if given {
			v.clk = a.clk
		}
		if a.refused != nil && machine.Landed(v.rec, a.refused) {
			return nil, nil
		}
		var w driver.Counts
		if p.FailureRate > 0 && machine.Counted(v.rec, g, &v.clk) {
			var counted bool
			var err error
			w, counted, err = c.extra().win.Count(ctx, &c.p.b.wins, c.name, p, v.rec, &v.clk, o, !a.counted)
			if a.counted = a.counted || counted; err != nil {
				return nil, c.stateError("window", err)
			}
		}
		a.tried = machine.Settle(v.rec, c.name, g, o, p, &v.clk, w)
		a.clk = v.clk
		return a.tried, nil
	})
}

// view is a record as loaded for a decision, and the decision's clock.
type view struct {
	rec   *driver.Record
	k     *kept // rec's kept form, when a driver.Watcher vouched for it
	clk   machine.Clock
	local bool // clk is the local one (the store gave no time): an OpenError's RetryAfter counts down
}

// update loads the circuit's record, asks decide for the record to store in
// its place (nil: nothing to store) and stores it, deciding again on the
// record a concurrent writer stored instead. It is the one loop of the
// Breaker's I/O: every rule is decided by decide, through the machine. A
// view first, when given, is the record just loaded: the first decision is
// made on it. With settling, the operation ran, and its outcome is recorded
// even when ctx ends meanwhile: every write, and every load after the
// first, runs detached from ctx's cancellation.
func (c *Circuit) update(ctx context.Context, settling bool, first *view, decide func(view) (*driver.Record, error)) error {
	var cancel context.CancelFunc
	defer func() {
		if cancel != nil {
			cancel()
		}
	}()
	detached := func() bool { // detaches ctx once, when settling
		if settling && cancel == nil {
			ctx, cancel = detach(ctx)
			return true
		}
		return false
	}
	for range maxConflicts {
		if err := ctx.Err(); err != nil && !settling {
			return err
		}
		var v view
		var err error
		if first != nil {
			v, first = *first, nil
		} else if err = c.load(ctx, &v); err != nil && ctx.Err() != nil && detached() {
			err = c.load(ctx, &v) // the caller's context ended: load again, detached
		}
		if err != nil {
			return err
		}
		next, err := decide(v)
		if err != nil || next == nil {
			return err
		}
		detached()
		if ok, err := c.replace(ctx, v.rec, next); err != nil || ok {
			return err
		}
	}
	return c.stateError("replace", fmt.Errorf("gave up after %d concurrent changes", maxConflicts))
}

// load loads the circuit's record into v: the kept one while its Watch
// holds (after a Refresh), else the store's, kept if the store vouches.
func (c *Circuit) load(ctx context.Context, v *view) error {
	v.clk.Reset(c.p.b.read)
	v.local = c.p.b.local
	w := c.p.b.watcher
	k := c.kept.Load() // kept only from a driver.Watcher
	holds := k != nil && k.w.Holds()
	if k != nil && !holds && ctx.Err() == nil {
		if err := w.Refresh(ctx); err != nil {
			return c.stateError("load", err)
		}
		holds = k.w.Holds()
	}
	if holds {
		v.rec, v.k = k.rec, k
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if w == nil {
		rec, now, err := c.storeLoad(ctx)
		if err != nil {
			return c.stateError("load", err)
		}
		v.rec = rec
		if !now.IsZero() && c.p.b.clock == nil {
			v.clk, v.local = *machine.At(now), false
		}
		return nil
	}
	rec, watch, err := w.LoadWatched(ctx, c.name)
	if err != nil {
		return c.stateError("load", err)
	}
	v.rec = rec
	if watch != (driver.Watch{}) {
		v.k = c.keep(v, watch)
	}
	return nil
}

// keep keeps v's record, loaded with the Watch w, with what its standing
// decision lets the hot path do. A circuit that owes a settlement keeps
// none: it refuses calls until it is written (owed.go).
func (c *Circuit) keep(v *view, w driver.Watch) *kept {
	if c.owing() != nil {
		return nil
	}
	k := &c.first
	if !c.first.used.CompareAndSwap(false, true) {
		k = new(kept)
	}
	k.w, k.rec = w, v.rec
	if st, ok := machine.StandingOf(v.rec); ok {
		k.quiet, k.count = st.Quiet && c.p.plain, c.p.rules.FailureRate > 0
		if !st.Admitted && c.p.rejects && v.local && v.clk.Before(st.Until) {
			k.rej = c.newRejection(v, st.State, st.Until, st.Forced, false, c.p.b.listed(c))
		}
	}
	if old := c.kept.Swap(k); old != nil && old.rej != nil {
		c.p.b.alarms.Unset(&old.rej.alarm)
	}
	if c.owing() != nil { // owed meanwhile (owe dropped the record kept before)
		c.drop(k)
	}
	return k
}

// drop stops keeping k, if it is still the kept record.
func (c *Circuit) drop(k *kept) {
	if k != nil && c.kept.CompareAndSwap(k, nil) && k.rej != nil {
		c.p.b.alarms.Unset(&k.rej.alarm)
	}
}

// storeLoad, storeReplace and storeDelete call the store for the circuit,
// by its bound handle when it has one.
func (c *Circuit) storeLoad(ctx context.Context) (*driver.Record, time.Time, error) {
	if m := c.more.Load(); m != nil && m.bound != nil {
		return m.bound.Load(ctx)
	}
	return c.p.b.store.Load(ctx, c.name)
}

func (c *Circuit) storeReplace(ctx context.Context, prev, next *driver.Record) error {
	if m := c.more.Load(); m != nil && m.bound != nil {
		return m.bound.Replace(ctx, prev, next)
	}
	return c.p.b.store.Replace(ctx, c.name, prev, next)
}

func (c *Circuit) storeDelete(ctx context.Context) error {
	if m := c.more.Load(); m != nil && m.bound != nil {
		return m.bound.Delete(ctx)
	}
	return c.p.b.store.Delete(ctx, c.name)
}

// replace stores next over prev. It reports false on a conflict.
func (c *Circuit) replace(ctx context.Context, prev, next *driver.Record) (bool, error) {
	err := c.storeReplace(ctx, prev, next)
	switch {
	case err == nil:
		c.p.b.obs.transition(ctx, prev, next)
		return true, nil
	case errors.Is(err, driver.ErrConflict):
		return false, nil
	}
	return false, c.stateError("replace", err)
}
