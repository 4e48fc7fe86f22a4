// Package prommetrics exports circuits to Prometheus, in a module of its own
// so that the runtime stays free of its dependencies.
//
// Observer is a circuit.Observer: give it to circuit.New and register it,
// and it counts and times the calls, rejections and transitions a Breaker
// makes (circuitgen_circuit_calls_total, circuitgen_circuit_call_duration_seconds,
// circuitgen_circuit_rejections_total, circuitgen_circuit_transitions_total).
// StateCollector reads each circuit's state, by the store's clock, on every
// scrape (circuitgen_circuit_state, circuitgen_circuit_failures,
// circuitgen_circuit_state_error), so it also shows what other processes
// sharing the store did. The README's Metrics section lists every metric and
// its labels.
//
// The counters and the histogram count this process's calls; sum them across
// processes in queries. Circuit names are fixed logical dependency names, so
// the "circuit" label has a small, bounded set of values.
package prommetrics
