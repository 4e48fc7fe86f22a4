package errpolicysplit

import (
	"context"
	"io"
)

// API turns the threshold rule off, and only one method gives a rate.
//
//circuitgen:guard circuit=api threshold=0 cooldown=1m errors=io.EOF
type API interface {
	//circuitgen:circuit api-get rate=50% min_calls=10 window=1m
	Get(ctx context.Context) error
	//circuitgen:circuit api-put
	Put(ctx context.Context) error
	//circuitgen:circuit api-del rate=50% min_calls=10 window=1m max_cooldown=20s
	Del(ctx context.Context) error
}
