package errallskipped

import "context"

// API guards nothing.
//
//circuitgen:guard circuit=api errors=context.Canceled skip=Get
type API interface {
	//circuitgen:skip
	Put(ctx context.Context) error
	Get(ctx context.Context) error
	Close() error
}

// Empty has no method.
//
//circuitgen:guard circuit=empty errors=context.Canceled
type Empty interface{}
