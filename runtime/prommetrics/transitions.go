package prommetrics

import (
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/prometheus/client_golang/prometheus"
)

// Transitions counts the state transitions a Breaker commits, as
// circuitgen_transitions_total{circuit,from,to}. It is a circuit.Observer to
// pass to circuit.WithObserver and a prometheus.Collector to register. Each
// process counts its own transitions; sum them across processes in queries.
type Transitions struct {
	total *prometheus.CounterVec
}

var (
	_ circuit.Observer     = (*Transitions)(nil)
	_ prometheus.Collector = (*Transitions)(nil)
)

// NewTransitions returns a Transitions with no counts.
func NewTransitions() *Transitions {
	return &Transitions{total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "circuitgen_transitions_total",
		Help: "State transitions of circuits committed by this process.",
	}, []string{"circuit", "from", "to"})}
}

// ObserveTransition counts t.
func (c *Transitions) ObserveTransition(t circuit.Transition) {
	c.total.WithLabelValues(t.Name, t.From.String(), t.To.String()).Inc()
}

// Init makes the counters of every transition of the named circuits exist at
// zero, so that the first transition after a restart shows in rate() and
// increase().
func (c *Transitions) Init(names ...string) {
	edges := [][2]circuit.State{
		{circuit.StateClosed, circuit.StateOpen},
		{circuit.StateOpen, circuit.StateHalfOpen},
		{circuit.StateHalfOpen, circuit.StateClosed},
		{circuit.StateHalfOpen, circuit.StateOpen},
	}
	for _, name := range names {
		for _, e := range edges {
			c.total.WithLabelValues(name, e[0].String(), e[1].String())
		}
	}
}

// Describe sends the counter's description.
func (c *Transitions) Describe(ch chan<- *prometheus.Desc) { c.total.Describe(ch) }

// Collect sends the counters.
func (c *Transitions) Collect(ch chan<- prometheus.Metric) { c.total.Collect(ch) }
