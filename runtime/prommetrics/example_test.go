package prommetrics_test

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
	"github.com/circuitgen/circuitgen/runtime/prommetrics"
)

// An Observer, registered, counts a Breaker's calls by outcome.
func Example() {
	obs := prommetrics.NewObserver()
	reg := prometheus.NewRegistry()
	reg.MustRegister(obs)
	b := circuit.New(circuittest.NewStore(), circuit.WithObserver(obs))
	for range 3 {
		_ = b.Run(context.Background(), "billing-api", circuit.Policy{}, func(context.Context) (circuit.Outcome, error) {
			return circuit.Success, nil
		})
	}
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "circuitgen_circuit_calls_total" {
			for _, m := range f.GetMetric() {
				if m.GetCounter().GetValue() > 0 {
					fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetLabel()[1].GetValue(), m.GetCounter().GetValue())
				}
			}
		}
	}
	// Output: circuitgen_circuit_calls_total billing-api success 3
}
