package otelcircuit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of every instrument of the package.
const scope = modulePath

// meter returns mp's meter for the scope, with the module's version.
func meter(mp metric.MeterProvider) metric.Meter {
	return mp.Meter(scope, metric.WithInstrumentationVersion(version()))
}

// Attribute keys, in the circuitgen namespace.
const (
	keyName       = attribute.Key("circuitgen.circuit.name")
	keyState      = attribute.Key("circuitgen.circuit.state")
	keyForced     = attribute.Key("circuitgen.circuit.forced")
	keyGeneration = attribute.Key("circuitgen.circuit.generation")
	keyRetryAfter = attribute.Key("circuitgen.circuit.retry_after") // seconds
	keyOutcome    = attribute.Key("circuitgen.call.outcome")
	keyFrom       = attribute.Key("circuitgen.transition.from")
	keyTo         = attribute.Key("circuitgen.transition.to")
)

// Span event names.
const (
	eventRejected   = "circuitgen.call.rejected"
	eventObserved   = "circuitgen.call.observed_rejection"
	eventTransition = "circuitgen.circuit.transition"
)

// durationBounds are the call-duration histogram's bucket boundaries, in
// seconds: those the HTTP semantic conventions advise for request durations.
var durationBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

var outcomes = []circuit.Outcome{circuit.Ignored, circuit.Success, circuit.Failure}

// Observer records the calls, rejections and transitions of the Breakers it
// is given to (circuit.WithObserver) as OTel metrics and span events. It is
// safe for concurrent use.
//
// Calls and rejections are counted in memory (a lookup of the circuit's
// counts in a sync.Map and one atomic addition) and reported as
// asynchronous counters when the meter provider collects, so that the
// happy path does not pay for the SDK's attribute lookups. A call's
// duration goes to a synchronous histogram, its attributes prepared once
// per circuit; transitions, which are rare, go through a synchronous
// counter. Both take the caller's context (and so may carry exemplars).
type Observer struct {
	transitions metric.Int64Counter
	duration    metric.Float64Histogram
	circuits    sync.Map // circuit name → *counts
}

var _ circuit.Observer = (*Observer)(nil)

// counts are a circuit's call and rejection counts, and the attributes of
// its durations.
type counts struct {
	name     attribute.KeyValue
	outcome  [3]atomic.Int64 // by circuit.Outcome
	rejected rejections      // calls rejected
	observed rejections      // calls an observe-only circuit ran instead
	took     [3][]metric.RecordOption
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
	m := meter(mp)
	o := new(Observer)
	var err error
	if o.transitions, err = m.Int64Counter("circuitgen.circuit.transitions", metric.WithUnit("{transition}"),
		metric.WithDescription("State transitions of circuits committed by this process.")); err != nil {
		return nil, fmt.Errorf("otelcircuit: %w", err)
	}
	if o.duration, err = m.Float64Histogram("circuitgen.circuit.call.duration", metric.WithUnit("s"),
		metric.WithDescription("How long the calls admitted through a circuit took, by outcome."),
		metric.WithExplicitBucketBoundaries(durationBounds...)); err != nil {
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
	c := &counts{name: keyName.String(name)}
	for _, out := range outcomes {
		c.took[out] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(c.name, keyOutcome.String(out.String())))}
	}
	actual, _ := o.circuits.LoadOrStore(name, c)
	return actual.(*counts)
}

// ObserveOutcome counts a completed call and records how long it took.
func (o *Observer) ObserveOutcome(ctx context.Context, name string, out circuit.Outcome, d time.Duration) {
	if int(out) >= len(outcomes) {
		return
	}
	c := o.counts(name)
	c.outcome[out].Add(1)
	o.duration.Record(ctx, d.Seconds(), c.took[out]...)
}

// ObserveRejection counts a rejected call and adds a
// "circuitgen.call.rejected" event to the caller's span; for a call an
// observe-only circuit ran instead (e.ObserveOnly), an observed rejection
// and a "circuitgen.call.observed_rejection" event.
func (o *Observer) ObserveRejection(ctx context.Context, e *circuit.OpenError) {
	c := o.counts(e.Name)
	event := eventRejected
	if e.ObserveOnly {
		c.observed.add(e)
		event = eventObserved
	} else {
		c.rejected.add(e)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(event, trace.WithAttributes(c.name, keyState.String(e.State.String()),
			keyForced.Bool(e.Forced), keyRetryAfter.Float64(e.RetryAfter().Seconds())))
	}
}

// ObserveTransitionContext counts a transition and adds a
// "circuitgen.circuit.transition" event to the span of the call that made
// it.
func (o *Observer) ObserveTransitionContext(ctx context.Context, t circuit.Transition) {
	name := keyName.String(t.Name)
	from, to := keyFrom.String(t.From.String()), keyTo.String(t.To.String())
	o.transitions.Add(ctx, 1, metric.WithAttributes(name, from, to))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(eventTransition, trace.WithAttributes(name, from, to,
			keyGeneration.Int64(int64(t.Generation))))
	}
}

// ObserveTransition counts a transition made without a caller's context.
func (o *Observer) ObserveTransition(t circuit.Transition) {
	o.ObserveTransitionContext(context.Background(), t)
}
