package errbadduration

import "context"

// API has bad options.
//
//circuitgen:guard circuit=api cooldown=30 lease=ten threshold=x statuses=503 wrapper=Bad-Name
type API interface {
	//circuitgen:circuit api-get cooldown=1h30 statuses=99,500-450,abc errors=,context.Canceled retries=3
	Get(ctx context.Context) error
	//circuitgen:circuit
	Put(ctx context.Context) error
	//circuitgen:skip now
	Del(ctx context.Context) error
	//circuitgen:retry
	Head(ctx context.Context) error
}
