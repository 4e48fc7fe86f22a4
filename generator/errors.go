package generator

import "github.com/circuitgen/circuitgen/generator/internal/diag"

// Error is one problem found in a Go file or a manifest, at a position.
// Its Error method formats it as file:line:col: message.
type Error = diag.Error

// ErrorList is every problem found in one run, sorted by position: the
// error Generate returns when the input is at fault.
type ErrorList = diag.List
