// Package httpguard is the HTTP edge of circuitgen's circuit breaker.
//
// An open circuit must never answer 200: WriteError turns a *circuit.OpenError
// found anywhere in an error's chain into 503 Service Unavailable with a
// Retry-After header and an RFC 9457 problem document naming the circuit and
// the time it may admit calls again (and whether an operator holds it open),
// and a *circuit.StateError into a 503 problem that reveals nothing of the
// store. Middleware guards a handler that depends on one named circuit.
// NewTransport guards an http.Client's outgoing requests through a
// GuardedTransport, an http.RoundTripper circuitgen generates from this
// package's circuitgen.yaml.
//
// For operators, mounted on an admin mux the way net/http/pprof is:
// StatusHandlerFunc serves every circuit's state as JSON and as a small,
// self-contained HTML page; AdminHandler holds a circuit open or closed, or
// clears it, as circuitctl does from a shell, behind an authorizer of the
// application's own (there is no default that lets anyone in).
package httpguard
