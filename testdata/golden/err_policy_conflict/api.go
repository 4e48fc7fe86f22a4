package errpolicyconflict

import (
	"context"
	"io"
)

// A gives circuit y threshold 3.
//
//circuitgen:guard circuit=y threshold=3 errors=io.EOF
type A interface {
	Get(ctx context.Context) error
}

// B gives circuit y threshold 7.
//
//circuitgen:guard circuit=y threshold=7 errors=io.EOF
type B interface {
	Put(ctx context.Context) error
}
