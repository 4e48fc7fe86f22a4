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
// The state machine is Admit, SettleWindow (Settle without window counts)
// and Force, with the rules of Policy (Classify, Trips, CooldownAfter);
// Breaker.Run, Breaker.Allow, Breaker.ForceOpen and Call are the I/O around
// them. The failure-rate rule's window counts (WindowCells) are not part of
// the record: a store shares them between processes in memory
// (WindowStore), or on its server in batches (WindowSharer); otherwise each
// Breaker counts its own process's calls.
package circuit
