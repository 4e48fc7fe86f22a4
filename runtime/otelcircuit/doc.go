// Package otelcircuit instruments circuitgen's circuits with OpenTelemetry,
// in its own package so that runtime/circuit stays free of dependencies.
//
// Observer is a circuit.CallObserver: it counts the calls, rejections and
// transitions a Breaker makes as OTel metrics, and adds an event to the
// caller's active span when a call is rejected or makes a transition.
// RegisterState reports each circuit's stored state on every collection, so
// it also shows what other processes sharing the store did:
//
//	obs, err := otelcircuit.NewObserver(otel.GetMeterProvider())
//	...
//	b := circuit.New(store, circuit.WithObserver(obs))
//	reg, err := otelcircuit.RegisterState(otel.GetMeterProvider(), b, "billing-api", "search")
//
// The metrics, under the instrumentation scope of this package's import path:
//
//	circuitgen.circuit.calls        counter {call}        circuit.name, circuit.outcome (success, failure, ignored)
//	circuitgen.circuit.rejections   counter {call}        circuit.name, circuit.state (open, half_open), circuit.forced
//	circuitgen.circuit.observed_rejections  counter {call}  the same, for the calls an observe-only circuit ran instead
//	circuitgen.circuit.transitions  counter {transition}  circuit.name, circuit.from, circuit.to
//	circuitgen.circuit.state        gauge                 circuit.name, circuit.state: 1 for the stored state, 0 for the others
//	circuitgen.circuit.failures     gauge {failure}       circuit.name: consecutive failures
//	circuitgen.circuit.state_error  gauge                 circuit.name: 1 when the state cannot be read
//
// The span events: "circuit.rejected" (circuit.name, circuit.state,
// circuit.forced, circuit.retry_after_s), "circuit.observed_rejection" (the
// same, for a call an observe-only circuit ran instead) and
// "circuit.transition" (circuit.name, circuit.from, circuit.to,
// circuit.generation). The counters count this
// process's calls; sum them across processes in queries.
//
// Circuit names are fixed logical dependency names, so the circuit.name
// attribute has a small, bounded set of values.
package otelcircuit
