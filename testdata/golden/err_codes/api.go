package errcodes

import "context"

// API selects gRPC codes that are not failures.
//
//circuitgen:guard circuit=api codes=Unavailable,OK
type API interface {
	Get(ctx context.Context) error
	//circuitgen:circuit api-put codes=unavailable
	Put(ctx context.Context) error
}
