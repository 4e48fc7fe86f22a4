// Package otelcircuit instruments circuits with OpenTelemetry, in a module
// of its own so that the runtime stays free of its dependencies.
//
// Observer is a circuit.Observer: give it to circuit.New and it counts
// the Breaker's calls, rejections and transitions, times its calls, and adds
// an event to the caller's active span when a call is rejected or makes a
// transition. RegisterState reports each circuit's state, by the store's
// clock, on every collection, so it also shows what other processes sharing
// the store did. The instruments (circuitgen.circuit.calls,
// circuitgen.circuit.call.duration, circuitgen.circuit.rejections,
// circuitgen.circuit.state, …), their units and attributes are listed in the
// README's Metrics section; they belong to the instrumentation scope named by
// this package's import path, at this module's version as the binary's build
// information records it ("devel" when it records none).
//
// The counters and the histogram count this process's calls; sum them across
// processes in queries. Circuit names are fixed logical dependency names, so
// the circuitgen.circuit.name attribute has a small, bounded set of values.
package otelcircuit
