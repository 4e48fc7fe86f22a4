package circuit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// settleTimeout bounds the writes that settle a call, which run detached
// from the caller's context: a call that failed with
// context.DeadlineExceeded must still be counted.
const settleTimeout = 10 * time.Second

// maxConflicts bounds how often one decision is retried against concurrent
// writers before the Breaker gives up with a StateError.
const maxConflicts = 1000

// Breaker runs calls through circuits kept in a Store. It holds no circuit
// state itself, so one Breaker serves every circuit of an application, and
// every Breaker on the same store shares them. It is safe for concurrent use.
type Breaker struct {
	store Store
	// The optional interfaces of the store, nil when it has none.
	binder     driver.Binder
	storeClock driver.Clock
	windows    driver.WindowStore
	callWins   driver.CallWindowStore
	sharer     driver.WindowSharer
	clock      func() time.Time
	observe    bool            // WithObserveOnly
	observers  []Observer      // those that are not CallObservers
	calls      []CallObserver  // nil when there are none: the hot path checks
	events     []EventObserver // those that hear Events too

	mu    sync.RWMutex
	refs  map[string]*ref // circuit name → its ref, under mu
	names nameCache       // the refs last called by name (Breaker.Run, Allow)

	bounds  sync.Map     // Policy → *bound, every distinct policy validated
	nbounds atomic.Int32 // how many bounds holds, at most maxBounds

	epoch time.Time // a monotonic reading, for rejections (reject.go)
}

// maxBounds bounds how many distinct policies a Breaker keeps validated: an
// application passes a few fixed ones; beyond this many, a policy is
// validated again when its circuit's last policy was another.
const maxBounds = 1024

// ref is a circuit of the store, its name validated and bound once. It
// holds what a call reads; what few circuits use is in more.
type ref struct {
	name   string
	store  driver.BoundStore
	policy atomic.Pointer[bound]     // the policy last validated for it
	open   atomic.Pointer[rejection] // the latest rejection, for reuse
	win    atomic.Pointer[window]    // the window last used (window.go)
	more   atomic.Pointer[refMore]   // made on first use (ref.extra)
}

// refMore is the part of a ref that only some circuits use: a ref is kept
// per circuit, and one of 100,000 circuits is what their calls at random
// find in the cache, so it holds only what every rule of a local store uses.
type refMore struct {
	calls   atomic.Pointer[callWindow] // the count window last used (window.go)
	batch   atomic.Pointer[batch]      // the batch last used (share.go)
	wins    sync.Map                   // window span → *driver.WindowCells, when the store keeps none
	callSet sync.Map                   // window calls → *driver.CallCells, when the store keeps none
	batches sync.Map                   // window span → *batch, for a driver.WindowSharer (share.go)

	reported atomic.Pointer[time.Duration] // when a StateError was last reported (Breaker.start); nil never
}

// extra returns r's refMore, making it on first use.
func (r *ref) extra() *refMore {
	if m := r.more.Load(); m != nil {
		return m
	}
	r.more.CompareAndSwap(nil, new(refMore))
	return r.more.Load()
}

// ref returns the bound circuit name, validating the name the first time.
// Names are fixed dependency names, a finite set: one ref each is kept.
func (b *Breaker) ref(name string) (*ref, error) { return b.refInto(name, nil) }

// known returns the named circuit's ref, nil when it has none yet.
func (b *Breaker) known(name string) *ref {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.refs[name]
}

// Names returns the names of the circuits this Breaker has run calls
// through (Run, Allow, a Circuit handle with a valid policy), sorted. A
// store lists the circuits it has a record of, and a circuit has none until
// an outcome changes something: a status page of this process lists these
// as well, so that its healthy circuits show.
func (b *Breaker) Names() []string {
	b.mu.RLock()
	names := make([]string, 0, len(b.refs))
	for name, r := range b.refs {
		if r.policy.Load() != nil {
			names = append(names, name)
		}
	}
	b.mu.RUnlock()
	slices.Sort(names)
	return names
}

// refInto is ref, making the ref in spare (when not nil) if the name has
// none yet.
func (b *Breaker) refInto(name string, spare *ref) (*ref, error) {
	if r := b.known(name); r != nil {
		return r, nil
	}
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if r := b.refs[name]; r != nil {
		return r, nil
	}
	r := spare
	if r == nil {
		r = new(ref)
	}
	r.name = name
	if b.binder != nil {
		r.store = b.binder.Bind(name)
	} else {
		r.store = &named{store: b.store, name: name}
	}
	if b.refs == nil {
		b.refs = make(map[string]*ref)
	}
	b.refs[name] = r
	return r, nil
}

// nameCache holds the refs last called by name, each in the slot of its
// name's bytes' address: a call whose name is a constant (the usual case)
// finds its ref with a multiplication and one comparison of two strings
// that share their bytes, with no map hashing. A slot that holds another
// name's ref is a miss: the ref is looked up in Breaker.refs and put in.
type nameCache [256]atomic.Pointer[ref]

// slot returns name's slot.
func (c *nameCache) slot(name string) *atomic.Pointer[ref] {
	addr := uint64(uintptr(unsafe.Pointer(unsafe.StringData(name))))
	return &c[addr*0x9E3779B97F4A7C15>>56]
}

// named returns the ref of the named circuit, validating the name the
// first time.
func (b *Breaker) named(name string) (*ref, error) {
	slot := b.names.slot(name)
	if r := slot.Load(); r != nil && r.name == name {
		return r, nil
	}
	r, err := b.ref(name)
	if err != nil {
		return nil, err
	}
	slot.Store(r)
	return r, nil
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

// WithObserver adds an observer of state transitions.
func WithObserver(o Observer) Option {
	return func(b *Breaker) { b.observers = append(b.observers, o) }
}

// New returns a Breaker over store. It does no I/O.
func New(store Store, opts ...Option) *Breaker {
	b := &Breaker{store: store, epoch: time.Now()}
	b.binder, _ = store.(driver.Binder)
	b.storeClock, _ = store.(driver.Clock)
	b.windows, _ = store.(driver.WindowStore)
	b.callWins, _ = store.(driver.CallWindowStore)
	b.sharer, _ = store.(driver.WindowSharer)
	for _, o := range opts {
		o(b)
	}
	for _, o := range b.observers {
		if e, ok := o.(EventObserver); ok {
			b.events = append(b.events, e)
		}
	}
	b.observers = slices.DeleteFunc(b.observers, func(o Observer) bool {
		c, ok := o.(CallObserver)
		if ok {
			b.calls = append(b.calls, c)
		}
		return ok
	})
	b.listen(store)
	return b
}

// bound is a Policy that Validate accepted, and its rules.
type bound struct {
	policy Policy
	rules  machine.Policy
}

// Run runs op through the named circuit under policy p.
//
// Run returns a *ConfigError for an invalid name or policy, a *OpenError when
// the circuit rejects the call (op is not invoked), a *StateError when the
// state cannot be read or written, and ctx's error when ctx is done before
// the call is admitted; otherwise op's own error. op runs outside every
// lock and is given ctx itself (generated code relies on it); its Outcome
// settles the circuit. A panic in op settles as Ignored and continues. An
// observe-only circuit (Policy.ObserveOnly, WithObserveOnly) returns
// neither a *OpenError nor a *StateError: it runs op instead, and returns
// op's own error.
func (b *Breaker) Run(ctx context.Context, name string, p Policy, op func(context.Context) (Outcome, error)) error {
	r, rules, err := b.bind(name, p)
	if err != nil {
		return err
	}
	return b.run(ctx, r, rules, op)
}

// bind returns the named circuit's ref and the rules of p after validating
// name and p: the configuration errors of Run, Allow and Circuit, before any
// I/O. A name is validated once, and so is each distinct policy: while
// callers keep passing a circuit the same policy, binding it is one
// comparison.
func (b *Breaker) bind(name string, p Policy) (*ref, *machine.Policy, error) {
	r, err := b.named(name)
	if err != nil {
		return nil, nil, err
	}
	return b.bindRef(r, p)
}

// bindRef returns r and the rules of p after validating p.
func (b *Breaker) bindRef(r *ref, p Policy) (*ref, *machine.Policy, error) {
	if v := r.policy.Load(); v != nil && v.policy == p {
		return r, &v.rules, nil
	}
	v, err := b.validated(p)
	if err != nil {
		return nil, nil, err
	}
	r.policy.Store(v)
	return r, &v.rules, nil
}

// validated returns p's bound, validating p the first time it is seen.
func (b *Breaker) validated(p Policy) (*bound, error) {
	if v, ok := b.bounds.Load(p); ok {
		return v.(*bound), nil
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	v := &bound{policy: p, rules: p.rules()}
	v.rules.ObserveOnly = v.rules.ObserveOnly || b.observe
	if b.nbounds.Load() >= maxBounds {
		return v, nil
	}
	actual, loaded := b.bounds.LoadOrStore(p, v)
	if !loaded {
		b.nbounds.Add(1)
	}
	return actual.(*bound), nil
}

// run runs op through the circuit of r under p, which is immutable (a
// bound's rules).
func (b *Breaker) run(ctx context.Context, r *ref, p *machine.Policy, op func(context.Context) (Outcome, error)) error {
	var g admission
	if err := b.allow(ctx, r, p, &g); err != nil {
		if passes(p, err) {
			_, opErr := op(ctx)
			return opErr
		}
		return err
	}
	return b.call(ctx, r, p, &g, op)
}

// call runs op, admitted with g, and settles it: apart from run, so that a
// rejection does not set up what an admitted call needs.
func (b *Breaker) call(ctx context.Context, r *ref, p *machine.Policy, g *admission, op func(context.Context) (Outcome, error)) error {
	// The call is timed only when something reads the time: the slow-call
	// rule, or a CallObserver.
	timed := p.SlowCall > 0 || b.calls != nil
	var start time.Duration
	if timed {
		start = b.start()
	}
	// A panic of op settles the call as Ignored, which changes nothing for
	// a call admitted closed: only a probe's, or one the CallObservers
	// hear of, is settled on the way out.
	if g.Probe || b.calls != nil {
		settled := false
		defer func() {
			if !settled { // op panicked: settle, then let the panic go on
				_ = b.settle(ctx, r, p, g, machine.Ignored, b.took(timed, start))
			}
		}()
		o, opErr := op(ctx)
		settled = true
		return b.settled(ctx, r, p, g, o, opErr, b.took(timed, start))
	}
	o, opErr := op(ctx)
	return b.settled(ctx, r, p, g, o, opErr, b.took(timed, start))
}

// settled settles the call admitted with g, whose op returned o and opErr
// after d, and returns what the call returns.
func (b *Breaker) settled(ctx context.Context, r *ref, p *machine.Policy, g *admission, o Outcome, opErr error, d time.Duration) error {
	outcome := machine.Outcome(o)
	if p.SlowCall > 0 {
		outcome = p.Classify(outcome, d)
	}
	if err := b.settle(ctx, r, p, g, outcome, d); err != nil && !p.ObserveOnly {
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
	var se *StateError
	if errors.As(err, &se) {
		se.Ran = true
		se.CallErr = opErr
	}
	return err
}

// load loads the circuit's record and the store's time (zero when the
// store leaves the clock to the Breaker).
func (b *Breaker) load(ctx context.Context, r *ref) (*driver.Record, time.Time, error) {
	rec, now, err := r.store.Load(ctx)
	if err != nil {
		return nil, now, b.stateError(r, "load", err)
	}
	return rec, now, nil
}

// now returns the time for a decision: the injected clock, else the store's
// time, else the store's driver.Clock, else the local wall clock.
func (b *Breaker) now(storeNow time.Time) time.Time {
	switch {
	case b.clock != nil:
		return b.clock()
	case !storeNow.IsZero():
		return storeNow
	case b.storeClock != nil:
		return b.storeClock.Now()
	}
	return time.Now()
}

// start returns a reading for took, which measures how long an operation
// took (for Policy.SlowCall and the CallObservers): the injected clock's
// time in nanoseconds when there is one, else the time since the Breaker's
// epoch on the monotonic clock, which reads no wall clock.
func (b *Breaker) start() time.Duration {
	if b.clock != nil {
		return time.Duration(b.clock().UnixNano())
	}
	return time.Since(b.epoch)
}

// took is how long a call that started at the reading start took, when it
// was timed; 0 otherwise.
func (b *Breaker) took(timed bool, start time.Duration) time.Duration {
	if !timed {
		return 0
	}
	return b.start() - start
}

// replace stores next over prev. It reports false on a conflict.
func (b *Breaker) replace(ctx context.Context, r *ref, prev, next *driver.Record) (bool, error) {
	err := r.store.Replace(ctx, prev, next)
	switch {
	case err == nil:
		b.notify(ctx, prev, next)
		return true, nil
	case errors.Is(err, driver.ErrConflict):
		return false, nil
	}
	return false, b.stateError(r, "replace", err)
}

// admission is how allow admitted a call.
type admission struct {
	machine.Grant
	// healthy is set when a Success of the call leaves the record that
	// admitted it, rec (nil: none), unchanged: closed with no failures
	// counted and no operator's hold. While the store still returns rec when
	// the call settles, a Success changes nothing (machine.Unchanged).
	healthy bool
	rec     *driver.Record
}

// allow admits a call, setting *g, or says why not. name and policy are
// valid.
func (b *Breaker) allow(ctx context.Context, r *ref, p *machine.Policy, g *admission) error {
	for range maxConflicts {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, storeNow, err := b.load(ctx, r)
		if err != nil {
			return err
		}
		if rec == nil {
			// machine.Admit's case of no record (a circuit that never
			// failed), which needs no clock and writes nothing.
			g.Grant, g.healthy = machine.First, true
			return nil
		}
		if rec.State == StateClosed {
			// machine.Admit's closed case, which needs no clock: the hot path.
			g.Grant = machine.Grant{Incarnation: rec.Incarnation, Generation: rec.Generation}
			g.healthy, g.rec = rec.Failures == 0 && !rec.Forced, rec
			return nil
		}
		local := storeNow.IsZero() && b.clock == nil
		if local {
			if e := r.rejected(rec, b.epoch, p.ObserveOnly); e != nil {
				return b.rejection(ctx, e) // machine.Admit's rejection, as decided for this record
			}
		}
		now := b.now(storeNow)
		a := machine.Admit(rec, r.name, *p, now, newID)
		if !a.Admitted {
			return b.rejection(ctx, r.reject(rec, a, now, b.epoch, local, p.ObserveOnly))
		}
		if a.Next == nil {
			g.Grant = a.Grant
			return nil
		}
		if ok, err := b.replace(ctx, r, rec, a.Next); err != nil || ok {
			g.Grant = a.Grant
			return err
		}
	}
	return b.stateError(r, "replace", fmt.Errorf("gave up after %d concurrent changes", maxConflicts))
}

// settle records a call's outcome, already classified (Policy.Classify);
// d is how long the call took, for the CallObservers.
// A closed-admitted call of a current record is counted in the window of
// the rate rule, once, before the decision that may open the circuit.
//
// The operation has returned, so its outcome is recorded even when the
// caller's context ends meanwhile, whether it ended before settle began or
// ends while settle waits (a deadline that falls while another writer holds
// the lock): every write runs on a context detached from the caller's
// cancellation and bounded by settleTimeout (settleWrite). The first load
// writes nothing and runs on the caller's context while it lasts, so that a
// call that changes nothing (a success on a healthy circuit) costs nothing
// more: a Success of a call admitted by a record that it leaves unchanged
// (admission.healthy) only checks that the record is still that one.
func (b *Breaker) settle(ctx context.Context, r *ref, p *machine.Policy, a *admission, o machine.Outcome, d time.Duration) error {
	for _, c := range b.calls {
		c.ObserveOutcome(ctx, r.name, Outcome(o), d)
	}
	g := &a.Grant
	if o == machine.Ignored && !g.Probe {
		return nil // an ignored call in the closed state changes nothing
	}
	counted := false
	rec, storeNow, err := b.load(ctx, r)
	if err == nil && a.healthy && rec == a.rec && o == machine.Success && p.FailureRate == 0 {
		return nil // the record that admitted it, which a Success leaves unchanged
	}
	if err != nil {
		if ctx.Err() == nil {
			return err
		}
		return b.settleWrite(ctx, r, p, g, o, nil, nil, counted) // loads again, detached
	}
	next, err := b.settleStep(ctx, r, p, g, o, rec, storeNow, &counted)
	if err != nil || next == nil {
		return err
	}
	return b.settleWrite(ctx, r, p, g, o, rec, next, counted)
}

// settleStep decides a settlement against rec, loaded with storeNow: it
// counts the call in the rate rule's window when it counts there and
// *counted is not yet set (then sets it), and returns the record to store,
// nil when nothing changes. It reads the clock at most once.
func (b *Breaker) settleStep(ctx context.Context, r *ref, p *machine.Policy, g *machine.Grant, o machine.Outcome, rec *driver.Record, storeNow time.Time, counted *bool) (*driver.Record, error) {
	var w driver.Counts
	var now time.Time
	if rec != nil && rec.Forced {
		now = b.now(storeNow) // whether an operator's hold has ended
	}
	if p.FailureRate > 0 && machine.Current(rec, g) && !machine.Held(rec, now) {
		var err error
		switch {
		case p.WindowCalls > 0:
			w, err = b.countCalls(r, p, rec, o, !*counted)
		case b.sharer != nil:
			if now.IsZero() {
				now = b.now(storeNow)
			}
			w, err = b.countShared(ctx, r, p, rec, now, o, !*counted) // a flush detaches itself
		default:
			w, err = b.count(r, p, rec, storeNow, &now, o, !*counted)
		}
		if err != nil {
			return nil, err
		}
		*counted = true
	}
	if machine.Unchanged(rec, g, o) {
		return nil, nil // the healthy call: no policy, no time
	}
	// Whether machine.SettleWindow changes anything does not depend on the
	// time but for a forced record, so the clock is read only when it does.
	if machine.SettleWindow(rec, r.name, *g, o, *p, now, w) == nil {
		return nil, nil
	}
	if now.IsZero() {
		now = b.now(storeNow)
	}
	return machine.SettleWindow(rec, r.name, *g, o, *p, now, w), nil
}

// settleWrite stores next over rec (both nil: it loads and decides first),
// deciding again against the record a concurrent writer stored, on a
// context detached from ctx's cancellation.
func (b *Breaker) settleWrite(ctx context.Context, r *ref, p *machine.Policy, g *machine.Grant, o machine.Outcome, rec, next *driver.Record, counted bool) error {
	// A context that never ends needs no detaching. Done is asked only
	// here, off the happy path: on a fresh context.WithTimeout it makes
	// the channel.
	if ctx.Done() != nil {
		var cancel context.CancelFunc
		ctx, cancel = detach(ctx)
		defer cancel()
	}
	for range maxConflicts {
		if next == nil {
			var storeNow time.Time
			var err error
			if rec, storeNow, err = b.load(ctx, r); err != nil {
				return err
			}
			if next, err = b.settleStep(ctx, r, p, g, o, rec, storeNow, &counted); err != nil || next == nil {
				return err
			}
		}
		if ok, err := b.replace(ctx, r, rec, next); err != nil || ok {
			return err
		}
		next = nil
	}
	return b.stateError(r, "replace", fmt.Errorf("gave up after %d concurrent changes", maxConflicts))
}

// detach returns a context with ctx's values that ctx's cancellation does
// not reach, ending after settleTimeout.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
}

// notify tells the observers of a committed change from prev to next, when
// it is a transition.
func (b *Breaker) notify(ctx context.Context, prev, next *driver.Record) {
	from := StateClosed
	if prev != nil {
		from = prev.State
	}
	if len(b.observers)+len(b.calls) == 0 || from == next.State {
		return
	}
	t := Transition{Name: next.Name, From: from, To: next.State, Generation: next.Generation, Failures: next.Failures, At: next.UpdatedAt}
	for _, o := range b.observers {
		o.ObserveTransition(t)
	}
	for _, c := range b.calls {
		c.ObserveTransitionContext(ctx, t)
	}
}

// rejection tells the CallObservers of a call that e rejected, and returns e.
func (b *Breaker) rejection(ctx context.Context, e *OpenError) *OpenError {
	for _, c := range b.calls {
		c.ObserveRejection(ctx, e)
	}
	return e
}

// ForceOpen holds the named circuit open for d, 1s..24h, in every process
// sharing the store: calls are rejected with an *OpenError whose Forced is
// set, a half-open probe in flight loses its claim, and no call admitted
// before changes the circuit. It replaces a ForceClosed hold. Clear ends it
// early; when d ends, the next call claims a half-open probe, as after any
// cooldown. A corrupt record must be cleared first.
func (b *Breaker) ForceOpen(ctx context.Context, name string, d time.Duration) error {
	return b.force(ctx, "ForceOpen", name, d, machine.ForceOpen)
}

// ForceClosed holds the named circuit closed for d, 1s..24h, in every
// process sharing the store: every call is admitted (no *OpenError), no
// outcome counts or opens the circuit, a half-open probe in flight loses
// its claim, and no call admitted before changes the circuit. It replaces
// a ForceOpen hold. Clear ends it early; when d ends, the circuit is
// plainly closed with no failures counted and a fresh window. A corrupt
// record must be cleared first.
func (b *Breaker) ForceClosed(ctx context.Context, name string, d time.Duration) error {
	return b.force(ctx, "ForceClosed", name, d, machine.ForceClosed)
}

// force stores the record that hold (machine.ForceOpen or ForceClosed)
// makes of the named circuit's for d; op names the method for errors.
func (b *Breaker) force(ctx context.Context, op, name string, d time.Duration,
	hold func(*driver.Record, string, time.Time, time.Duration, func() string) *driver.Record) error {
	r, err := b.named(name)
	if err != nil {
		return err
	}
	if d < minCooldown || d > maxCooldown {
		return &ConfigError{Field: op + " duration", Value: d.String(), Reason: "must be within 1s..24h"}
	}
	for range maxConflicts {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, storeNow, err := b.load(ctx, r)
		if err != nil {
			return err
		}
		next := hold(rec, name, b.now(storeNow), d, newID)
		if ok, err := b.replace(ctx, r, rec, next); err != nil || ok {
			return err
		}
	}
	return b.stateError(r, "replace", fmt.Errorf("gave up after %d concurrent changes", maxConflicts))
}

// newID returns 16 random bytes as 32 hex digits.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
