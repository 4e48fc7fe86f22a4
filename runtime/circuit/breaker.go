package circuit

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/alarm"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
	"github.com/circuitgen/circuitgen/runtime/internal/window"
)

// settleTimeout bounds the writes that settle a call, detached from the
// caller's context: a call that timed out must still be counted.
const settleTimeout = 10 * time.Second

// maxConflicts bounds the retries of one decision against concurrent
// writers; then the Breaker gives up with a StateError.
const maxConflicts = 1000

// maxPolicies bounds the distinct policies a Breaker keeps validated; past
// it, a policy is validated at each call that brings it by name.
const maxPolicies = 1024

// Breaker runs calls through circuits kept in a Store. It holds no circuit
// state that the store does not vouch for, so one Breaker serves every
// circuit of an application, and every Breaker on the same store shares
// them. It is safe for concurrent use.
type Breaker struct {
	store Store
	// The optional interfaces of the store, nil when it has none.
	binder  driver.Binder
	watcher driver.Watcher
	wins    window.Stores

	clock   func() time.Time // WithClock's; nil: the store's
	read    func() time.Time // the clock of a decision the store gives no time for
	local   bool             // read is the local clock (not WithClock's): a rejection may keep its deadline on the monotonic clock (reject.go)
	observe bool             // WithObserveOnly
	obs     observers
	epoch   time.Time // a monotonic reading: durations count from it

	mu       sync.RWMutex
	circuits map[string]*Circuit // the first handle of each name, under mu

	policies  sync.Map // Policy → *bound, each distinct policy validated
	npolicies atomic.Int32
	unset     *bound // the bound of a handle without a policy

	// alarms holds the kept rejections' deadlines (reject.go). Its timer
	// keeps it and them alive, not the Breaker.
	alarms *alarm.Clock
}

// Option configures a Breaker.
type Option func(*Breaker)

// WithClock makes the Breaker take every decision's time from now instead of
// the store's clock. All processes sharing a store must agree on the clock;
// it is meant for tests.
func WithClock(now func() time.Time) Option { return func(b *Breaker) { b.clock = now } }

// WithObserveOnly makes every circuit of the Breaker observe only, as
// Policy.ObserveOnly does for one: decisions are made, recorded and
// reported as usual, but no call is rejected. It is meant for rolling a
// breaker out: watch what it would reject before it does.
func WithObserveOnly() Option { return func(b *Breaker) { b.observe = true } }

// WithObserver adds an observer (see Observer for the methods it may have).
func WithObserver(o Observer) Option { return func(b *Breaker) { b.obs.add(o) } }

// New returns a Breaker over store. It does no I/O.
func New(store Store, opts ...Option) *Breaker {
	b := &Breaker{store: store, epoch: time.Now(), alarms: &alarm.Clock{}}
	b.unset = &bound{b: b}
	b.binder, _ = store.(driver.Binder)
	b.watcher, _ = store.(driver.Watcher)
	b.wins.Times, _ = store.(driver.WindowStore)
	b.wins.Calls, _ = store.(driver.CallWindowStore)
	b.wins.Sharer, _ = store.(driver.WindowSharer)
	for _, o := range opts {
		o(b)
	}
	switch c, ok := store.(driver.Clock); {
	case b.clock != nil:
		b.read = b.clock
	case ok: // its monotonic reading, if any, is not the wall clock's (reject.go)
		b.read, b.local = func() time.Time { return c.Now().Round(0) }, true
	default:
		b.read, b.local = time.Now, true
	}
	if n, ok := store.(driver.Notifier); ok {
		n.Notify(func(err error) { b.obs.event(Event{Err: err, At: time.Now()}) })
	}
	return b
}

// Run runs op through the named circuit under policy p.
//
// Run returns a *ConfigError for an invalid name or policy, a *OpenError when
// the circuit rejects the call (op is not invoked), a *StateError when the
// state cannot be read or written, and ctx's error when ctx is done before
// the call is admitted and admitting it needs the store; otherwise op's own
// error. op runs outside every lock and is given ctx itself (generated code
// relies on it); its Outcome settles the circuit. A panic in op settles as
// Ignored and continues. An observe-only circuit (Policy.ObserveOnly,
// WithObserveOnly) returns neither a *OpenError nor a *StateError: it runs
// op instead, and returns op's own error.
func (b *Breaker) Run(ctx context.Context, name string, p Policy, op func(context.Context) (Outcome, error)) error {
	c, v, err := b.bind(name, p)
	switch {
	case err != nil:
		return err
	case v == c.p:
		return c.Run(ctx, op) // the circuit's own policy: its shortcut too
	}
	return c.run(ctx, &v.rules, op)
}

// Allow admits one call to the named circuit under policy p, or returns the
// same errors as Run does before the operation. Every Ticket must be settled
// with Done; an unsettled probe holds its claim until its lease expires. An
// observe-only circuit returns a Ticket for a call it would reject: the
// call runs outside the circuit's state, and its Done changes nothing.
func (b *Breaker) Allow(ctx context.Context, name string, p Policy) (*Ticket, error) {
	c, v, err := b.bind(name, p)
	if err != nil {
		return nil, err
	}
	return c.ticket(ctx, &v.rules)
}

// Names returns the names of the circuits this Breaker has run calls
// through or made a Circuit of with a valid policy, sorted. A store lists
// the circuits it has a record of, and a healthy circuit has none: a status
// page of this process lists these as well.
func (b *Breaker) Names() []string {
	b.mu.RLock()
	names := make([]string, 0, len(b.circuits))
	for name, c := range b.circuits {
		if c.p.set {
			names = append(names, name)
		}
	}
	b.mu.RUnlock()
	slices.Sort(names)
	return names
}

// bind returns the named circuit's handle and p's bound, validating both
// the first time, before any I/O. While callers pass a circuit its own
// policy, it is one map look-up and one comparison.
func (b *Breaker) bind(name string, p Policy) (*Circuit, *bound, error) {
	b.mu.RLock()
	c := b.circuits[name]
	b.mu.RUnlock()
	if c != nil && c.p.set && c.p.policy == p {
		return c, c.p, nil
	}
	if c == nil {
		if err := ValidateName(name); err != nil {
			return nil, nil, err
		}
	}
	v, err := b.validated(p)
	if err != nil {
		return nil, nil, err
	}
	if c == nil || !c.p.set {
		c = b.keep(b.newCircuit(name, v)) // its first policy: listed from now on
	}
	return c, v, nil
}

// named returns the named circuit's first handle, making one without a
// policy (for Snapshot, Clear and the operators) if it has none.
func (b *Breaker) named(name string) (*Circuit, error) {
	b.mu.RLock()
	c := b.circuits[name]
	b.mu.RUnlock()
	if c != nil {
		return c, nil
	}
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	return b.keep(b.newCircuit(name, b.unset)), nil
}

// listed reports whether c is its name's listed handle (keep).
func (b *Breaker) listed(c *Circuit) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.circuits[c.name] == c
}

// keep makes c its name's handle unless the name has one with a policy,
// and returns the name's handle.
func (b *Breaker) keep(c *Circuit) *Circuit {
	b.mu.Lock()
	defer b.mu.Unlock()
	if old := b.circuits[c.name]; old != nil && (old.p.set || !c.p.set) {
		return old
	}
	if b.circuits == nil {
		b.circuits = make(map[string]*Circuit)
	}
	b.circuits[c.name] = c
	return c
}

// bound is a Policy that Validate accepted, and its rules.
type bound struct {
	b       *Breaker
	set     bool  // policy is set; false for a handle without one, or an invalid one (err)
	err     error // the *ConfigError of an invalid name or policy
	policy  Policy
	rules   machine.Policy
	plain   bool // a healthy call only runs, or is counted in the rate rule's window: no slow-call rule or observer
	rejects bool // a standing rejection only returns: not observe-only, no observer
}

// validated returns p's bound, validating p the first time it is seen.
func (b *Breaker) validated(p Policy) (*bound, error) {
	if v, ok := b.policies.Load(p); ok {
		return v.(*bound), nil
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	v := &bound{b: b, set: true, policy: p, rules: p.rules()}
	v.rules.ObserveOnly = v.rules.ObserveOnly || b.observe
	v.plain = v.rules.SlowCall == 0 && !b.obs.calls && (v.rules.FailureRate == 0 || b.wins.Sharer == nil)
	v.rejects = !v.rules.ObserveOnly && !b.obs.calls
	if b.npolicies.Load() >= maxPolicies {
		return v, nil
	}
	actual, loaded := b.policies.LoadOrStore(p, v)
	if !loaded {
		b.npolicies.Add(1)
	}
	return actual.(*bound), nil
}

// since returns the time since the Breaker's epoch on the monotonic clock,
// or the injected clock's Unix time: for call durations and report pacing.
func (b *Breaker) since() time.Duration {
	if b.clock != nil {
		return time.Duration(b.clock().UnixNano())
	}
	return time.Since(b.epoch)
}

// detach returns a context with ctx's values, out of reach of its
// cancellation, that ends after settleTimeout; ctx itself if it never ends.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Done() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
}
