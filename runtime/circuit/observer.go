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

// Observer hears every state transition a Breaker commits, after it is
// stored and outside every lock, in the goroutine that made it. Transitions
// made by other processes are heard by their own Breakers.
type Observer interface {
	ObserveTransition(Transition)
}

// CallObserver is an Observer that also hears about calls, in the caller's
// goroutine and with its context (to reach its trace span, for example):
// each call a circuit rejects, and each admitted call's outcome. A Breaker
// tells a CallObserver of a transition through ObserveTransitionContext, with
// the context of the call that made it, in place of ObserveTransition.
//
// New checks each observer for this interface once; a Breaker with no
// CallObserver does no work for it on any call, and times a call only for
// Policy.SlowCall.
type CallObserver interface {
	Observer
	// ObserveTransitionContext hears a committed transition, as
	// ObserveTransition does, with the context of the call that made it.
	ObserveTransitionContext(ctx context.Context, t Transition)
	// ObserveRejection hears a call that e rejected: the operation did not
	// run. When e.ObserveOnly is set, an observe-only circuit would have
	// rejected it: the operation ran outside the circuit's state, and its
	// outcome is not heard.
	ObserveRejection(ctx context.Context, e *OpenError)
	// ObserveOutcome hears the outcome of an admitted call to the named
	// circuit, before it is settled; a panic is heard as Ignored. d is how
	// long the call took: the operation's run for Run, from Allow to Done
	// for a Ticket; on WithClock's clock when one is given, else on the
	// monotonic clock. The outcome is after Policy.SlowCall's rule: a slow
	// Success is heard as Failure.
	ObserveOutcome(ctx context.Context, name string, o Outcome, d time.Duration)
}

// ObserverFunc adapts a function to an Observer.
type ObserverFunc func(Transition)

// ObserveTransition calls f(t).
func (f ObserverFunc) ObserveTransition(t Transition) { f(t) }

// SlogObserver returns an EventObserver that logs to l: each transition, at
// Warn when a circuit opens and at Info otherwise; each Event, at Error when
// calls are refused (a StateError) or the store lost its state, and at Warn
// for an unsafe store setting.
func SlogObserver(l *slog.Logger) EventObserver { return slogObserver{l} }

type slogObserver struct{ l *slog.Logger }

func (o slogObserver) ObserveTransition(t Transition) {
	level := slog.LevelInfo
	if t.To == StateOpen {
		level = slog.LevelWarn
	}
	o.l.LogAttrs(context.Background(), level, "circuit "+t.To.String(),
		slog.String("circuit", t.Name),
		slog.String("from", t.From.String()),
		slog.String("to", t.To.String()),
		slog.Uint64("generation", t.Generation),
		slog.Int("failures", t.Failures),
		slog.Time("at", t.At),
	)
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
