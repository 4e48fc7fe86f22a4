package classifiergroup

import (
	"context"
	"errors"
	"io"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// ErrBusy is a failure.
var ErrBusy = errors.New("busy")

// API classifies with a function; a method that selects errors, statuses
// or codes of its own replaces it.
//
//circuitgen:guard circuit=api classifier=classify
type API interface {
	Put(ctx context.Context, body []byte) error
	//circuitgen:circuit api-get errors=io.EOF
	Get(ctx context.Context) error
	//circuitgen:circuit api-del statuses=503
	Del(ctx context.Context) error
}

// Selected selects errors and statuses; a method that gives codes= or a
// classifier replaces both.
//
//circuitgen:guard circuit=sel errors=ErrBusy statuses=500-599
type Selected interface {
	Put(ctx context.Context, body []byte) error
	//circuitgen:circuit sel-get codes=Unavailable
	Get(ctx context.Context) error
	//circuitgen:circuit sel-del classifier=classify
	Del(ctx context.Context) error
	//circuitgen:circuit sel-head statuses=429
	Head(ctx context.Context) error
}

func classify(err error) circuit.Outcome {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return circuit.Failure
	}
	if err != nil {
		return circuit.Ignored
	}
	return circuit.Success
}
