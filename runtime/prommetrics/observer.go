package prommetrics

import (
	"context"
	"sync"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/prometheus/client_golang/prometheus"
)

// Observer counts and times what a Breaker does, as
//
//	circuitgen_circuit_calls_total{circuit,outcome}
//	circuitgen_circuit_call_duration_seconds{circuit,outcome}  (a histogram)
//	circuitgen_circuit_rejections_total{circuit,state,forced}
//	circuitgen_circuit_observed_rejections_total{circuit,state,forced}
//	circuitgen_circuit_transitions_total{circuit,from,to}
//
// It is a circuit.Observer to pass to circuit.WithObserver and a
// prometheus.Collector to register. Each process counts its own calls; sum
// them across processes in queries. It is safe for concurrent use.
//
// A call costs a lookup of its circuit's series (a sync.Map read), a
// counter's atomic addition and a histogram observation: the label values
// are resolved once per circuit, not on every call.
type Observer struct {
	calls       *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	rejections  *prometheus.CounterVec
	observed    *prometheus.CounterVec
	transitions *prometheus.CounterVec
	circuits    sync.Map // circuit name → *series
}

var (
	_ circuit.Observer     = (*Observer)(nil)
	_ prometheus.Collector = (*Observer)(nil)
)

// outcomes are the outcomes a call is counted by, indexed by circuit.Outcome.
var outcomes = []circuit.Outcome{circuit.Ignored, circuit.Success, circuit.Failure}

// series are one circuit's counters and histograms, their labels resolved.
type series struct {
	calls    [3]prometheus.Counter  // by circuit.Outcome
	duration [3]prometheus.Observer // by circuit.Outcome
	rejected rejections             // calls rejected
	observed rejections             // calls an observe-only circuit ran instead
}

// rejections are a circuit's rejection counters: open, forced open,
// half-open with a probe in flight.
type rejections struct{ open, forced, probing prometheus.Counter }

// newRejections resolves the named circuit's rejection counters of v.
func newRejections(v *prometheus.CounterVec, name string) rejections {
	return rejections{
		open:    v.WithLabelValues(name, circuit.StateOpen.String(), "false"),
		forced:  v.WithLabelValues(name, circuit.StateOpen.String(), "true"),
		probing: v.WithLabelValues(name, circuit.StateHalfOpen.String(), "false"),
	}
}

// inc counts the rejection e.
func (r rejections) inc(e *circuit.OpenError) {
	switch {
	case e.State == circuit.StateHalfOpen:
		r.probing.Inc()
	case e.Forced:
		r.forced.Inc()
	default:
		r.open.Inc()
	}
}

// NewObserver returns an Observer with no counts.
func NewObserver() *Observer {
	return &Observer{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "circuitgen_circuit_calls_total",
			Help: "Calls admitted through a circuit and completed, by outcome (success, failure, ignored), in this process.",
		}, []string{"circuit", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "circuitgen_circuit_call_duration_seconds",
			Help:    "How long the calls admitted through a circuit took, by outcome, in this process.",
			Buckets: prometheus.DefBuckets,
		}, []string{"circuit", "outcome"}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "circuitgen_circuit_rejections_total",
			Help: "Calls a circuit rejected without running them, by its state (open, half_open) and whether an operator forced it open, in this process.",
		}, []string{"circuit", "state", "forced"}),
		observed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "circuitgen_circuit_observed_rejections_total",
			Help: "Calls an observe-only circuit would have rejected and ran instead, by its state (open, half_open) and whether an operator forced it open, in this process.",
		}, []string{"circuit", "state", "forced"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "circuitgen_circuit_transitions_total",
			Help: "State transitions of circuits committed by this process.",
		}, []string{"circuit", "from", "to"}),
	}
}

// series returns the named circuit's series, resolving their labels the
// first time.
func (o *Observer) series(name string) *series {
	if s, ok := o.circuits.Load(name); ok {
		return s.(*series)
	}
	s := new(series)
	for _, out := range outcomes {
		s.calls[out] = o.calls.WithLabelValues(name, out.String())
		s.duration[out] = o.duration.WithLabelValues(name, out.String())
	}
	s.rejected = newRejections(o.rejections, name)
	s.observed = newRejections(o.observed, name)
	actual, _ := o.circuits.LoadOrStore(name, s)
	return actual.(*series)
}

// ObserveOutcome counts a completed call and observes how long it took.
func (o *Observer) ObserveOutcome(_ context.Context, name string, out circuit.Outcome, d time.Duration) {
	if int(out) >= len(outcomes) {
		return
	}
	s := o.series(name)
	s.calls[out].Inc()
	s.duration[out].Observe(d.Seconds())
}

// ObserveRejection counts a rejected call, or one an observe-only circuit
// ran instead (e.ObserveOnly) as an observed rejection.
func (o *Observer) ObserveRejection(_ context.Context, e *circuit.OpenError) {
	s := o.series(e.Name)
	if e.ObserveOnly {
		s.observed.inc(e)
		return
	}
	s.rejected.inc(e)
}

// ObserveTransitionContext counts t.
func (o *Observer) ObserveTransitionContext(_ context.Context, t circuit.Transition) {
	o.ObserveTransition(t)
}

// ObserveTransition counts t.
func (o *Observer) ObserveTransition(t circuit.Transition) {
	o.transitions.WithLabelValues(t.Name, t.From.String(), t.To.String()).Inc()
}

// Init makes every series of the named circuits exist at zero (each
// outcome, rejection and transition), so that the first event after a
// restart shows in rate() and increase().
func (o *Observer) Init(names ...string) {
	edges := [][2]circuit.State{
		{circuit.StateClosed, circuit.StateOpen},
		{circuit.StateOpen, circuit.StateHalfOpen},
		{circuit.StateHalfOpen, circuit.StateClosed},
		{circuit.StateHalfOpen, circuit.StateOpen},
	}
	for _, name := range names {
		o.series(name)
		for _, e := range edges {
			o.transitions.WithLabelValues(name, e[0].String(), e[1].String())
		}
	}
}

// Describe sends the descriptions of the counters and the histogram.
func (o *Observer) Describe(ch chan<- *prometheus.Desc) {
	o.calls.Describe(ch)
	o.duration.Describe(ch)
	o.rejections.Describe(ch)
	o.observed.Describe(ch)
	o.transitions.Describe(ch)
}

// Collect sends the counters and the histogram.
func (o *Observer) Collect(ch chan<- prometheus.Metric) {
	o.calls.Collect(ch)
	o.duration.Collect(ch)
	o.rejections.Collect(ch)
	o.observed.Collect(ch)
	o.transitions.Collect(ch)
}
