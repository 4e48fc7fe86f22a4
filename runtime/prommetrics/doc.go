// Package prommetrics exports circuitgen's circuits to Prometheus, in its
// own package so that runtime/circuit stays free of dependencies.
//
// Transitions is a circuit.Observer that counts the state transitions a
// Breaker commits; StateCollector reads each circuit's stored state on every
// scrape, so it also shows what other processes sharing the store did:
//
//	transitions := prommetrics.NewTransitions()
//	b := circuit.New(store, circuit.WithObserver(transitions))
//	prometheus.MustRegister(transitions, prommetrics.NewStateCollector(b, "billing-api", "search"))
//
// The metrics:
//
//	circuitgen_transitions_total{circuit,from,to}  counter, this process's transitions
//	circuitgen_circuit_state{circuit,state}        1 for the stored state, 0 for the others
//	circuitgen_circuit_failures{circuit}           consecutive failures
//	circuitgen_circuit_state_error{circuit}        1 when the state cannot be read (corrupt or unreadable)
//
// Circuit names are fixed logical dependency names, so the "circuit" label
// has a small, bounded set of values.
package prommetrics
