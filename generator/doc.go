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
//
// A method whose one result reports its error with Err() error, Error()
// error or FirstErr() error, and has no SetErr(error), is settled on that
// error right after the call; when the circuit rejects the call, it
// returns a result built from the rejection by a constructor of the
// result's package. The constructor is found by this rule: among the
// package's exported functions, not generic, whose only result is the
// result's type T and whose parameters include exactly one error, every
// other one of a type whose zero value the wrapper can write (a basic
// type, nil for pointers, slices, maps, channels, functions and
// interfaces, T{} for an exported struct or array type), the one with the
// fewest parameters; func(error) T is so taken first. A final variadic
// parameter is passed nothing, the others their zero values, and the
// rejection as the error: func(doc string, err error) T is called as
// T("", rejection). When two or more tie, or there is none, the method is
// an error that says what constructor is missing.
package generator
