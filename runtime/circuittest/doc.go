// Package circuittest is a kit for testing the code that uses circuits:
// what a service does when a dependency's circuit is open, half-open or
// closed again, without real failures, state directories or waiting out
// real cooldowns.
//
// A Kit is a Breaker over an in-memory Store (or any store, with NewWith)
// whose every decision is taken by the Kit's Clock. Give its Breaker to the
// guarded client under test, put a circuit in a state with Open, HalfOpen or
// Close, move time with Advance, and check a state with RequireState. Store
// on its own is an in-memory store that passes the conformance suite of
// package drivertest, for tests that drive real failures through a Breaker.
package circuittest
