// Package otelcircuit instruments circuitgen's circuits with OpenTelemetry,
// in its own package so that runtime/circuit stays free of dependencies.
//
// Observer is a circuit.CallObserver: it counts the calls, rejections and
// transitions a Breaker makes and times its calls, as OTel metrics, and adds
// an event to the caller's active span when a call is rejected or makes a
// transition. RegisterState reports each circuit's state on every
// collection, so it also shows what other processes sharing the store did:
//
//	obs, err := otelcircuit.NewObserver(otel.GetMeterProvider())
//	...
//	b := circuit.New(store, circuit.WithObserver(obs))
//	reg, err := otelcircuit.RegisterState(otel.GetMeterProvider(), b, "billing-api", "search")
//
// The instruments belong to the instrumentation scope named by this
// package's import path, whose version is this module's as the binary's
// build information records it (runtime/debug.ReadBuildInfo), or "devel"
// when it records none (a test, a build of a checkout or of a replace
// directive to a directory). Their names and units:
//
//	circuitgen.circuit.calls          counter    {call}        circuitgen.circuit.name, circuitgen.call.outcome (success, failure, ignored)
//	circuitgen.circuit.call.duration  histogram  s             circuitgen.circuit.name, circuitgen.call.outcome
//	circuitgen.circuit.rejections     counter    {call}        circuitgen.circuit.name, circuitgen.circuit.state (open, half_open), circuitgen.circuit.forced
//	circuitgen.circuit.observed_rejections  counter  {call}    the same, for the calls an observe-only circuit ran instead
//	circuitgen.circuit.transitions    counter    {transition}  circuitgen.circuit.name, circuitgen.transition.from, circuitgen.transition.to
//	circuitgen.circuit.state          gauge      1             circuitgen.circuit.name, circuitgen.circuit.state: 1 for the state by the store's clock, 0 for the others
//	circuitgen.circuit.failures       gauge      {failure}     circuitgen.circuit.name: consecutive failures
//	circuitgen.circuit.state_error    gauge      1             circuitgen.circuit.name: 1 when the state cannot be read
//
// The call-duration histogram's buckets are those the HTTP semantic
// conventions advise (5 ms to 10 s).
//
// The span events: "circuitgen.call.rejected" (circuitgen.circuit.name,
// circuitgen.circuit.state, circuitgen.circuit.forced, and
// circuitgen.circuit.retry_after, how long the caller should wait, in
// seconds, a double), "circuitgen.call.observed_rejection" (the same, for a
// call an observe-only circuit ran instead) and "circuitgen.circuit.transition"
// (circuitgen.circuit.name, circuitgen.transition.from,
// circuitgen.transition.to, circuitgen.circuit.generation). The counters
// and the histogram count this process's calls; sum them across processes
// in queries. The state gauges read the store: an open circuit whose
// cooldown is over reads half_open (ready to probe) without waiting for a
// call.
//
// Circuit names are fixed logical dependency names, so the
// circuitgen.circuit.name attribute has a small, bounded set of values.
package otelcircuit
