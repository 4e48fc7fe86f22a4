package errnoterrorlast

import "context"

// MyErr looks like an error but is a named string.
type MyErr string

// Batch is a builder whose Send reports the error.
type Batch interface {
	Add(v string) Batch
	Send(ctx context.Context) error
}

// API has methods that do not return the universe's error last.
//
//circuitgen:guard circuit=api statuses=503
type API interface {
	Get(ctx context.Context) (error, int)
	Put(ctx context.Context) MyErr
	None(ctx context.Context)
	// Batch returns a builder this run does not guard.
	Batch(ctx context.Context) Batch
	//circuitgen:skip
	Fine(ctx context.Context) int
}
