package prommetrics

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/prometheus/client_golang/prometheus"
)

// scrapeTimeout bounds reading every circuit's state during one scrape.
const scrapeTimeout = 10 * time.Second

var states = []circuit.State{circuit.StateClosed, circuit.StateOpen, circuit.StateHalfOpen}

var (
	stateDesc = prometheus.NewDesc("circuitgen_circuit_state",
		"State of the circuit by the store's clock (half_open once an open circuit's cooldown is over): 1 for its state, 0 for the others.", []string{"circuit", "state"}, nil)
	failuresDesc = prometheus.NewDesc("circuitgen_circuit_failures",
		"Consecutive failures recorded for the circuit.", []string{"circuit"}, nil)
	errorDesc = prometheus.NewDesc("circuitgen_circuit_state_error",
		"1 when the circuit's state cannot be read (a corrupt or unreadable record), 0 otherwise.", []string{"circuit"}, nil)
)

// StateCollector reports each circuit's state on every scrape, reading it
// with Breaker.Snapshot, which never claims a probe nor writes: the state by
// the store's clock, so an open circuit whose cooldown is over is reported
// half_open (ready to probe) before any call arrives. A circuit with no
// record is reported closed.
type StateCollector struct {
	b    *circuit.Breaker
	list func(context.Context) ([]string, error)
}

var _ prometheus.Collector = (*StateCollector)(nil)

// NewStateCollector returns a StateCollector for the named circuits.
func NewStateCollector(b *circuit.Breaker, names ...string) *StateCollector {
	names = slices.Clone(names)
	return NewStateCollectorFunc(b, func(context.Context) ([]string, error) { return names, nil })
}

// NewStateCollectorFunc returns a StateCollector that asks list for the
// circuits' names on every scrape, so that a store's listing can be plugged
// in (for a *filestore.Store, store.Names). When list fails, the scrape
// reports a collection error.
func NewStateCollectorFunc(b *circuit.Breaker, list func(context.Context) ([]string, error)) *StateCollector {
	return &StateCollector{b: b, list: list}
}

// Describe sends the descriptions of the state metrics.
func (c *StateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stateDesc
	ch <- failuresDesc
	ch <- errorDesc
}

// Collect reads every circuit's state and sends its metrics. A circuit whose
// state cannot be read has circuitgen_circuit_state_error 1 and no state or
// failures samples; the others are unaffected.
func (c *StateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	names, err := c.list(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(stateDesc, fmt.Errorf("list circuits: %w", err))
		return
	}
	names = slices.Clone(names)
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		snap, err := c.b.Snapshot(ctx, name)
		if err != nil {
			ch <- prometheus.MustNewConstMetric(errorDesc, prometheus.GaugeValue, 1, name)
			continue
		}
		ch <- prometheus.MustNewConstMetric(errorDesc, prometheus.GaugeValue, 0, name)
		for _, s := range states {
			v := 0.0
			if snap.State == s {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, name, s.String())
		}
		ch <- prometheus.MustNewConstMetric(failuresDesc, prometheus.GaugeValue, float64(snap.Failures), name)
	}
}
