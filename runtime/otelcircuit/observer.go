package otelcircuit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of every instrument of the package.
const scope = "github.com/circuitgen/circuitgen/runtime/otelcircuit"

// Attribute keys.
const (
	keyName       = attribute.Key("circuit.name")
	keyState      = attribute.Key("circuit.state")
	keyOutcome    = attribute.Key("circuit.outcome")
	keyFrom       = attribute.Key("circuit.from")
	keyTo         = attribute.Key("circuit.to")
	keyGeneration = attribute.Key("circuit.generation")
	keyRetryAfter = attribute.Key("circuit.retry_after_s")
	keyForced     = attribute.Key("circuit.forced")
)

var outcomes = []circuit.Outcome{circuit.Ignored, circuit.Success, circuit.Failure}

// Observer records the calls, rejections and transitions of the Breakers it
// is given to (circuit.WithObserver) as OTel metrics and span events. It is
// safe for concurrent use.
//
// A call costs a lookup of its circuit's counts (a sync.Map read) and one
// atomic addition: calls and rejections are counted in memory and reported
// as asynchronous counters when the meter provider collects, so that the
// happy path does not pay for the SDK's attribute lookups. Transitions, which are rare, go through a synchronous counter
// with the caller's context (and so may carry exemplars).
type Observer struct {
	transitions metric.Int64Counter
	circuits    sync.Map // circuit name → *counts
}

var _ circuit.CallObserver = (*Observer)(nil)

// counts are a circuit's call and rejection counts.
type counts struct {
	name     attribute.KeyValue
	outcome  [3]atomic.Int64 // by circuit.Outcome
	rejected rejections      // calls rejected
	observed rejections      // calls an observe-only circuit ran instead
}

// rejections are counts by circuit.State, then OpenError.Forced.
type rejections [3][2]atomic.Int64

// add counts a rejection of e.
func (r *rejections) add(e *circuit.OpenError) {
	if int(e.State) < len(r) {
		f := 0
		if e.Forced {
			f = 1
		}
		r[e.State][f].Add(1)
	}
}

// observe reports r to obs as counter, for the circuit named name.
func (r *rejections) observe(obs metric.Observer, counter metric.Int64Observable, name attribute.KeyValue) {
	for s := range r {
		for f := range r[s] {
			if n := r[s][f].Load(); n > 0 {
				obs.ObserveInt64(counter, n, metric.WithAttributes(name,
					keyState.String(circuit.State(s).String()), keyForced.Bool(f == 1)))
			}
		}
	}
}

// NewObserver returns an Observer whose instruments come from mp. Its
// counters are reported for as long as mp lives.
func NewObserver(mp metric.MeterProvider) (*Observer, error) {
	m := mp.Meter(scope)
	o := new(Observer)
	var err error
	if o.transitions, err = m.Int64Counter("circuitgen.circuit.transitions", metric.WithUnit("{transition}"),
		metric.WithDescription("State transitions of circuits committed by this process.")); err != nil {
		return nil, fmt.Errorf("otelcircuit: %w", err)
	}
	calls, err := m.Int64ObservableCounter("circuitgen.circuit.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Calls admitted through a circuit and completed, by outcome."))
	if err != nil {
		return nil, fmt.Errorf("otelcircuit: %w", err)
	}
	rejections, err := m.Int64ObservableCounter("circuitgen.circuit.rejections", metric.WithUnit("{call}"),
		metric.WithDescription("Calls a circuit rejected without running them, by the circuit's state and whether an operator forced it open."))
	if err != nil {
		return nil, fmt.Errorf("otelcircuit: %w", err)
	}
	observed, err := m.Int64ObservableCounter("circuitgen.circuit.observed_rejections", metric.WithUnit("{call}"),
		metric.WithDescription("Calls an observe-only circuit would have rejected and ran instead, by the circuit's state and whether an operator forced it open."))
	if err != nil {
		return nil, fmt.Errorf("otelcircuit: %w", err)
	}
	_, err = m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		o.circuits.Range(func(_, v any) bool {
			c := v.(*counts)
			for _, out := range outcomes {
				if n := c.outcome[out].Load(); n > 0 {
					obs.ObserveInt64(calls, n, metric.WithAttributes(c.name, keyOutcome.String(out.String())))
				}
			}
			c.rejected.observe(obs, rejections, c.name)
			c.observed.observe(obs, observed, c.name)
			return true
		})
		return nil
	}, calls, rejections, observed)
	if err != nil {
		return nil, fmt.Errorf("otelcircuit: %w", err)
	}
	return o, nil
}

// counts returns the named circuit's counts.
func (o *Observer) counts(name string) *counts {
	if c, ok := o.circuits.Load(name); ok {
		return c.(*counts)
	}
	c, _ := o.circuits.LoadOrStore(name, &counts{name: keyName.String(name)})
	return c.(*counts)
}

// ObserveOutcome counts a completed call.
func (o *Observer) ObserveOutcome(_ context.Context, name string, out circuit.Outcome) {
	if int(out) < len(outcomes) {
		o.counts(name).outcome[out].Add(1)
	}
}

// ObserveRejection counts a rejected call and adds a "circuit.rejected"
// event to the caller's span; for a call an observe-only circuit ran
// instead (e.ObserveOnly), an observed rejection and a
// "circuit.observed_rejection" event.
func (o *Observer) ObserveRejection(ctx context.Context, e *circuit.OpenError) {
	c := o.counts(e.Name)
	event := "circuit.rejected"
	if e.ObserveOnly {
		c.observed.add(e)
		event = "circuit.observed_rejection"
	} else {
		c.rejected.add(e)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(event, trace.WithAttributes(c.name, keyState.String(e.State.String()),
			keyForced.Bool(e.Forced), keyRetryAfter.Int(e.RetryAfterSeconds())))
	}
}

// ObserveTransitionContext counts a transition and adds a
// "circuit.transition" event to the span of the call that made it.
func (o *Observer) ObserveTransitionContext(ctx context.Context, t circuit.Transition) {
	name := keyName.String(t.Name)
	from, to := keyFrom.String(t.From.String()), keyTo.String(t.To.String())
	o.transitions.Add(ctx, 1, metric.WithAttributes(name, from, to))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("circuit.transition", trace.WithAttributes(name, from, to,
			keyGeneration.Int64(int64(t.Generation))))
	}
}

// ObserveTransition counts a transition made without a caller's context.
func (o *Observer) ObserveTransition(t circuit.Transition) {
	o.ObserveTransitionContext(context.Background(), t)
}
