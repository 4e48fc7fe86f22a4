package circuit

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Transition is a committed change of a circuit's state.
type Transition struct {
	// Name is the circuit's name.
	Name string
	// From and To are the states before and after.
	From, To State
	// Generation is the record's generation after the change.
	Generation uint64
	// Failures is the consecutive failure count after the change.
	Failures int
	// At is the store's time of the change.
	At time.Time
}

// Event is something a Breaker learned besides a transition, which an
// operator should hear about: a circuit's state could not be read or
// written (Err is a *StateError, the calls are being refused), or the store
// reported a problem of its own: its dataset was lost or replaced (Err wraps
// driver.ErrLost), or a server setting weakens its guarantees (Err wraps
// driver.ErrUnsafe).
type Event struct {
	// Name is the circuit concerned; empty for the whole store.
	Name string
	// Err says what happened.
	Err error
	// At is when the Breaker learned it, by the local wall clock.
	At time.Time
}

// Observer hears every state transition a Breaker commits, after it is
// stored and outside every lock, in the goroutine that made it; transitions
// made by other processes are heard by their own Breakers. New looks once
// for these further methods, each optional, and calls those it finds:
//
//	// ObserveTransitionContext hears a transition in place of
//	// ObserveTransition, with the context of the call that made it (to
//	// reach its trace span, for example).
//	ObserveTransitionContext(ctx context.Context, t Transition)
//	// ObserveEvent hears Events: of a circuit's StateErrors the first, then
//	// at most one a minute while they go on; of the store's reports, each.
//	ObserveEvent(e Event)
//	// ObserveOutcome hears the outcome of each admitted call, before it is
//	// settled, in the caller's goroutine; a panic is heard as Ignored, a
//	// slow Success (Policy.SlowCall) as Failure. d is how long the call
//	// took: the operation's run for Run, from Allow to Done for a Ticket.
//	ObserveOutcome(ctx context.Context, name string, o Outcome, d time.Duration)
//	// ObserveRejection hears each call e rejected: the operation did not
//	// run. With e.ObserveOnly set, an observe-only circuit would have
//	// rejected it, and the operation ran outside the circuit's state.
//	ObserveRejection(ctx context.Context, e *OpenError)
//
// A Breaker with no observer of outcomes or rejections does no work for
// them on any call, and times a call only for Policy.SlowCall.
type Observer interface {
	ObserveTransition(Transition)
}

// ObserverFunc adapts a function to an Observer.
type ObserverFunc func(Transition)

// ObserveTransition calls f(t).
func (f ObserverFunc) ObserveTransition(t Transition) { f(t) }

// observers are a Breaker's observers' methods, sorted by kind.
type observers struct {
	transitions []func(context.Context, Transition)
	events      []func(Event)
	outcomes    []func(context.Context, string, Outcome, time.Duration)
	rejections  []func(context.Context, *OpenError)
	calls       bool // some hear outcomes or rejections: every call tells them
}

// add sorts o's methods into their lists.
func (obs *observers) add(o Observer) {
	if c, ok := o.(interface {
		ObserveTransitionContext(context.Context, Transition)
	}); ok {
		obs.transitions = append(obs.transitions, c.ObserveTransitionContext)
	} else {
		obs.transitions = append(obs.transitions, func(_ context.Context, t Transition) { o.ObserveTransition(t) })
	}
	if e, ok := o.(interface{ ObserveEvent(Event) }); ok {
		obs.events = append(obs.events, e.ObserveEvent)
	}
	if c, ok := o.(interface {
		ObserveOutcome(context.Context, string, Outcome, time.Duration)
	}); ok {
		obs.outcomes = append(obs.outcomes, c.ObserveOutcome)
	}
	if r, ok := o.(interface {
		ObserveRejection(context.Context, *OpenError)
	}); ok {
		obs.rejections = append(obs.rejections, r.ObserveRejection)
	}
	obs.calls = len(obs.outcomes)+len(obs.rejections) > 0
}

// transition tells the observers of a committed change from prev (nil:
// none) to next, when it changes the state.
func (obs *observers) transition(ctx context.Context, prev, next *driver.Record) {
	from := StateClosed
	if prev != nil {
		from = prev.State
	}
	if from == next.State || len(obs.transitions) == 0 {
		return
	}
	t := Transition{Name: next.Name, From: from, To: next.State, Generation: next.Generation, Failures: next.Failures, At: next.UpdatedAt}
	for _, f := range obs.transitions {
		f(ctx, t)
	}
}

func (obs *observers) event(e Event) {
	for _, f := range obs.events {
		f(e)
	}
}

func (obs *observers) outcome(ctx context.Context, name string, o Outcome, d time.Duration) {
	for _, f := range obs.outcomes {
		f(ctx, name, o, d)
	}
}

func (obs *observers) rejected(ctx context.Context, e *OpenError) {
	for _, f := range obs.rejections {
		f(ctx, e)
	}
}

// stateErrorEvery bounds how often a circuit's StateErrors are reported.
const stateErrorEvery = time.Minute

// stateError returns the StateError of the circuit's operation op failing
// with err, and reports it to the observers of events unless one was
// reported within stateErrorEvery.
func (c *Circuit) stateError(op string, err error) *StateError {
	se := &StateError{Name: c.name, Op: op, Err: err}
	if len(c.p.b.obs.events) == 0 {
		return se // no observer: no pacing state, no clock
	}
	reported := &c.extra().reported
	now, last := int64(c.p.b.since()), reported.Load()
	if last != 0 && now-last < int64(stateErrorEvery) || !reported.CompareAndSwap(last, now) {
		return se
	}
	e := *se // callers may still mark the returned one as Ran
	c.p.b.obs.event(Event{Name: c.name, Err: &e, At: time.Now()})
	return se
}

// SlogObserver returns an Observer that logs to l: each transition, at
// Warn when a circuit opens and at Info otherwise; each Event, at Error when
// calls are refused (a StateError) or the store lost its state, and at Warn
// for an unsafe store setting.
func SlogObserver(l *slog.Logger) Observer { return slogObserver{l} }

type slogObserver struct{ l *slog.Logger }

func (o slogObserver) ObserveTransition(t Transition) {
	level := slog.LevelInfo
	if t.To == StateOpen {
		level = slog.LevelWarn
	}
	o.l.LogAttrs(context.Background(), level, "circuit "+t.To.String(),
		slog.String("circuit", t.Name), slog.String("from", t.From.String()), slog.String("to", t.To.String()),
		slog.Uint64("generation", t.Generation), slog.Int("failures", t.Failures), slog.Time("at", t.At))
}

func (o slogObserver) ObserveEvent(e Event) {
	level, msg := slog.LevelError, "circuit store error"
	switch {
	case errors.As(e.Err, new(*StateError)):
		msg = "circuit state unavailable: calls refused"
	case errors.Is(e.Err, driver.ErrLost):
		msg = "circuit store lost its state: circuits probe before they admit calls"
	case errors.Is(e.Err, driver.ErrUnsafe):
		level, msg = slog.LevelWarn, "circuit store setting is unsafe"
	}
	attrs := []slog.Attr{slog.String("error", e.Err.Error()), slog.Time("at", e.At)}
	if e.Name != "" {
		attrs = append([]slog.Attr{slog.String("circuit", e.Name)}, attrs...)
	}
	o.l.LogAttrs(context.Background(), level, msg, attrs...)
}
