package errmissingcircuit

import (
	"context"
	"io"
)

// API has methods without a circuit.
//
//circuitgen:guard errors=context.Canceled
type API interface {
	io.Closer
	//circuitgen:circuit api
	Get(ctx context.Context) error
	Put(ctx context.Context) error
	//circuitgen:circuit api-none errors=
	None(ctx context.Context) error
}

// NoFailure selects nothing.
//
//circuitgen:guard circuit=nothing
type NoFailure interface {
	Get(ctx context.Context) error
}
