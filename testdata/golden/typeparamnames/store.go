package typeparamnames

import (
	"context"
	"errors"
)

// ErrDown is a failure.
var ErrDown = errors.New("down")

// Store's type parameters are named like the packages the output imports.
//
//circuitgen:guard circuit=store errors=ErrDown
type Store[circuit comparable, time any] interface {
	Get(ctx context.Context, key circuit) (time, error)
	Put(ctx context.Context, key circuit, value time) error
}
