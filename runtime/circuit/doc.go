// Package circuit is circuitgen's circuit breaker: circuit names, policies,
// call outcomes, the pure state machine, the errors callers match with
// errors.As, and the Breaker that runs calls through a shared Store.
//
// A Breaker keeps no state of its own. Every decision loads the circuit's
// record from the Store, applies a pure function of (record, policy, time) and,
// when something must change, replaces the record atomically. Any number of
// Breakers, in any number of processes, that share a store therefore share
// every circuit in it: one half-open probe across all of them, one failure
// count, one cooldown.
//
// The state machine is Admit and Settle; Breaker.Run, Breaker.Allow and Call
// are the I/O around them.
package circuit
