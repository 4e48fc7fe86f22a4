package errduplicateoption

import "context"

// API gives options twice.
//
//circuitgen:guard circuit=api statuses=503 threshold=3 threshold=7
type API interface {
	Get(ctx context.Context) error
	//circuitgen:circuit api-put statuses=502 statuses=503 cooldown=1m
	Put(ctx context.Context) error
}
