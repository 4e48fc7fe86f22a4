// Package fleetnemesis holds the fleet nemesis, a test of the distributed
// stores' local copies from outside, as an adversary with a proxy between
// the processes and the servers would try them: worker processes make
// guarded calls through cached Redis and PostgreSQL stores behind a TCP
// fault proxy (internal/faultproxy) while the nemesis delays, holds, pauses
// and resets their connections, restarts and flushes the server, drops and
// disables the notify trigger, makes the server refuse writes, and freezes
// workers; meanwhile another process opens circuits directly on the server. The checker reports every
// call admitted later than the stall bound after an opening, and every open
// circuit a lost dataset let through without a probe.
//
//	go test ./internal/fleetnemesis/ -run TestFleetNemesis -v     20s of faults a store (CI)
//	make nemesis-fleet                                             10 minutes a store
//
// CIRCUITGEN_FLEET_NEMESIS=<duration> sets how long the faults go on, and
// CIRCUITGEN_FLEET_NEMESIS_FAULTS=kind,... limits them to some kinds.
// The package has only tests.
package fleetnemesis
