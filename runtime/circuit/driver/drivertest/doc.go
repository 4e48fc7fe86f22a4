// Package drivertest is the conformance suite every driver.Store must pass:
// a store's own test calls Run with a Config that opens a fresh, empty store
// for each subtest.
//
// The suite checks the Store contract directly (a load of an absent record,
// replaces that create and update, compare-and-swap that refuses every kind
// of stale revision and then stores nothing, concurrent swaps that lose no
// update, delete) and then drives a circuit.Breaker over the store: a
// threshold of failures opens the circuit, an open circuit rejects without
// running the operation, one probe after the cooldown closes it, and many
// concurrent callers after the cooldown admit exactly one probe. A store
// that is a driver.WindowSharer has its side of the batched window checked;
// with a Corrupt hook, a corrupt record must be reported as such, fail
// closed, and be removed by Breaker.Clear. Records the suite stores carry
// times in whole milliseconds in UTC.
//
// Outage checks that a Breaker fails closed when a distributed store's
// server stops during a call and stays down.
package drivertest
