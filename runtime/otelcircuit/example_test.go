package otelcircuit_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
	"github.com/circuitgen/circuitgen/runtime/otelcircuit"
)

// An Observer over a meter provider counts a Breaker's calls.
func Example() {
	reader := sdkmetric.NewManualReader()
	obs, err := otelcircuit.NewObserver(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		fmt.Println(err)
		return
	}
	b := circuit.New(circuittest.NewStore(), circuit.WithObserver(obs))
	for range 3 {
		_ = b.Run(context.Background(), "billing-api", circuit.Policy{}, func(context.Context) (circuit.Outcome, error) {
			return circuit.Success, nil
		})
	}
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "circuitgen.circuit.calls" {
			fmt.Println(m.Name, sum.DataPoints[0].Value)
		}
	}
	// Output: circuitgen.circuit.calls 3
}
