package errmisplaced

import "context"

//circuitgen:guard circuit=x statuses=503
type NotIface struct{}

// API is not guarded, but its method has a directive.
type API interface {
	//circuitgen:circuit x statuses=503
	Get(ctx context.Context) error
}

//circuitgen:guard circuit=x statuses=503
func F() {}

// Guarded has a guard twice.
//
//circuitgen:guard circuit=x statuses=503
//circuitgen:guard circuit=y statuses=503
type Guarded interface {
	//circuitgen:circuit x
	//circuitgen:skip
	Get(ctx context.Context) error
	//circuitgen:guard circuit=x
	Put(ctx context.Context) error
}
