// Package prommetrics exports circuitgen's circuits to Prometheus, in its
// own package so that runtime/circuit stays free of dependencies.
//
// Observer is a circuit.CallObserver that counts and times the calls,
// rejections and transitions a Breaker makes; StateCollector reads each
// circuit's state on every scrape, so it also shows what other processes
// sharing the store did:
//
//	obs := prommetrics.NewObserver()
//	b := circuit.New(store, circuit.WithObserver(obs))
//	prometheus.MustRegister(obs, prommetrics.NewStateCollector(b, "billing-api", "search"))
//
// The metrics:
//
//	circuitgen_circuit_calls_total{circuit,outcome}             counter: admitted calls by outcome (success, failure, ignored)
//	circuitgen_circuit_call_duration_seconds{circuit,outcome}   histogram: how long admitted calls took
//	circuitgen_circuit_rejections_total{circuit,state,forced}   counter: calls rejected without running
//	circuitgen_circuit_observed_rejections_total{circuit,state,forced}  counter: calls an observe-only circuit ran instead
//	circuitgen_circuit_transitions_total{circuit,from,to}       counter: this process's transitions
//	circuitgen_circuit_state{circuit,state}                     1 for the state by the store's clock, 0 for the others
//	circuitgen_circuit_failures{circuit}                        consecutive failures
//	circuitgen_circuit_state_error{circuit}                     1 when the state cannot be read (corrupt or unreadable)
//
// The counters and the histogram count this process's calls; sum them
// across processes in queries. The state gauges read the store, shared by
// every process: an open circuit whose cooldown is over reads half_open
// (ready to probe) without waiting for a call.
//
// Circuit names are fixed logical dependency names, so the "circuit" label
// has a small, bounded set of values.
package prommetrics
