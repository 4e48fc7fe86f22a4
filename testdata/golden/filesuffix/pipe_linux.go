package filesuffix

import (
	"context"
	"errors"
)

// Pipe exists on Linux only, by its file's name.
//
//circuitgen:guard circuit=pipe errors=ErrClosed
type Pipe interface {
	Splice(ctx context.Context, n int) (int, error)
}

// ErrClosed is a closed pipe.
var ErrClosed = errors.New("pipe: closed")
