// Package httpguard is the HTTP edge of circuitgen's circuit breaker.
//
// An open circuit must never answer 200: WriteError turns a *circuit.OpenError
// found anywhere in an error's chain into 503 Service Unavailable with a
// Retry-After header and an RFC 9457 problem document naming the circuit and
// the time it may admit calls again, and a *circuit.StateError into a 503
// problem that reveals nothing of the store. Middleware guards a handler that
// depends on one named circuit: it rejects requests early while the circuit
// is open and counts the handler's 5xx responses as the circuit's failures.
//
// StatusHandler and StatusHandlerFunc serve an operators' view of circuits,
// as JSON for machines and as a small self-contained HTML page for people,
// to be mounted on an admin mux the way net/http/pprof is:
//
//	store, _ := filestore.Open("/var/lib/myapp/circuits")
//	b := circuit.New(store)
//	admin := http.NewServeMux()
//	admin.Handle("/debug/circuits", httpguard.StatusHandlerFunc(b, store.Names))
package httpguard
