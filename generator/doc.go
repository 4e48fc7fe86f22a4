// Package generator turns Go interfaces, marked with //circuitgen: directives
// or listed in a circuitgen.yaml manifest, into guarded clients: wrapper types
// that implement the same interface and run every call through a
// runtime/circuit Breaker.
//
// A run loads every package it needs with one packages.Load, reads the
// directives and the manifest into specs, builds a Model from them with the
// loaded type information, checks it, and renders one file per package.
// Every problem found on the way is collected and reported at once, as
// file:line:col: message.
package generator
