package cgofile

// #include <stdlib.h>
import "C"

import (
	"context"
	"errors"
)

// ErrBusy is the library's busy error.
var ErrBusy = errors.New("lib: busy")

// Lib is declared in a cgo file: a build without cgo has no Lib, and the
// wrapper must not be built then either.
//
//circuitgen:guard circuit=lib errors=ErrBusy
type Lib interface {
	Call(ctx context.Context, name string) (int, error)
}
