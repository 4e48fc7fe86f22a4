package errpolicy

import "context"

// API has policies out of bounds.
//
//circuitgen:guard circuit=api statuses=503 threshold=0 wrapper=Dup
type API interface {
	//circuitgen:circuit 9lives
	Get(ctx context.Context) error
	//circuitgen:circuit api-put cooldown=48h
	Put(ctx context.Context) error
	//circuitgen:circuit api-del lease=500ms threshold=3
	Del(ctx context.Context) error
	//circuitgen:circuit http://example.com/
	Head(ctx context.Context) error
}

// Dup is already declared.
type Dup struct{}
