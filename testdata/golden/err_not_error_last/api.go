package errnoterrorlast

import "context"

// MyErr looks like an error but is a named string.
type MyErr string

// API has methods that do not return the universe's error last.
//
//circuitgen:guard circuit=api statuses=503
type API interface {
	Get(ctx context.Context) (error, int)
	Put(ctx context.Context) MyErr
	None(ctx context.Context)
	//circuitgen:skip
	Fine(ctx context.Context) int
}
