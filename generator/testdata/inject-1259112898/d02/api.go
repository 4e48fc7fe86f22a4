package inj

import (
	"context"
	"io"
)

var _ = io.EOF

// T is a local error type.
type T struct{}

func (*T) Error() string { return "t" }

// API is guarded.
//
//circuitgen:guard wrapper=X{}
type API interface {
	//circuitgen:circuit ok errors=io.EOF
	Get(ctx context.Context) error
}
