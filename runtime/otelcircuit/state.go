package otelcircuit

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"go.opentelemetry.io/otel/metric"
)

// collectTimeout bounds reading every circuit's state during one collection.
const collectTimeout = 10 * time.Second

var states = []circuit.State{circuit.StateClosed, circuit.StateOpen, circuit.StateHalfOpen}

// RegisterState registers gauges of the named circuits' state with mp's
// meter, read with Breaker.Snapshot (which never claims a probe nor writes)
// on every collection: the state by the store's clock, so an open circuit
// whose cooldown is over is reported half_open (ready to probe) before any
// call arrives; a circuit with no record is reported closed. Unregister the
// returned Registration to stop.
func RegisterState(mp metric.MeterProvider, b *circuit.Breaker, names ...string) (metric.Registration, error) {
	names = slices.Clone(names)
	return RegisterStateFunc(mp, b, func(context.Context) ([]string, error) { return names, nil })
}

// RegisterStateFunc is RegisterState with the circuits' names asked of list
// on every collection, so that a store's listing can be plugged in (for a
// *filestore.Store, store.Names). When list fails, the collection reports
// its error and no state.
func RegisterStateFunc(mp metric.MeterProvider, b *circuit.Breaker, list func(context.Context) ([]string, error)) (metric.Registration, error) {
	m := meter(mp)
	state, err := m.Int64ObservableGauge("circuitgen.circuit.state", metric.WithUnit("1"),
		metric.WithDescription("State of the circuit by the store's clock (half_open once an open circuit's cooldown is over): 1 for its state, 0 for the others."))
	if err != nil {
		return nil, fmt.Errorf("otelcircuit: %w", err)
	}
	failures, err := m.Int64ObservableGauge("circuitgen.circuit.failures", metric.WithUnit("{failure}"),
		metric.WithDescription("Consecutive failures recorded for the circuit."))
	if err != nil {
		return nil, fmt.Errorf("otelcircuit: %w", err)
	}
	stateErr, err := m.Int64ObservableGauge("circuitgen.circuit.state_error", metric.WithUnit("1"),
		metric.WithDescription("1 when the circuit's state cannot be read (a corrupt or unreadable record), 0 otherwise."))
	if err != nil {
		return nil, fmt.Errorf("otelcircuit: %w", err)
	}
	reg, err := m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, collectTimeout)
		defer cancel()
		names, err := list(ctx)
		if err != nil {
			return fmt.Errorf("otelcircuit: list circuits: %w", err)
		}
		names = slices.Clone(names)
		slices.Sort(names)
		for _, name := range slices.Compact(names) {
			n := keyName.String(name)
			snap, err := b.Snapshot(ctx, name)
			if err != nil {
				o.ObserveInt64(stateErr, 1, metric.WithAttributes(n))
				continue
			}
			o.ObserveInt64(stateErr, 0, metric.WithAttributes(n))
			for _, s := range states {
				v := int64(0)
				if snap.State == s {
					v = 1
				}
				o.ObserveInt64(state, v, metric.WithAttributes(n, keyState.String(s.String())))
			}
			o.ObserveInt64(failures, int64(snap.Failures), metric.WithAttributes(n))
		}
		return nil
	}, state, failures, stateErr)
	if err != nil {
		return nil, fmt.Errorf("otelcircuit: %w", err)
	}
	return reg, nil
}
