// Package generator turns Go interfaces, marked with //circuitgen:
// directives or listed in a circuitgen.yaml manifest, into guarded clients:
// wrapper types that implement the same interface and run every call
// through a runtime/circuit Breaker.
//
// Generate is one run, a pipeline of stages, each a package of its own
// under internal/: load lists and parses the target packages; spec decodes
// their directives and the manifest, with one option schema, into typed
// specs; load type-checks the targets, their dependencies read from export
// data; model builds and checks one immutable model per output file, its
// identifiers chosen; render writes it. Every problem found on the way goes
// to one collector and is reported at once, as file:line:col: message.
package generator
