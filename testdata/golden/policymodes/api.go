package policymodes

import (
	"context"
	"errors"
)

// ErrDown is the dependency's failure.
var ErrDown = errors.New("down")

// API's circuits are rolled out in observe-only mode; one is judged by its
// last 100 calls.
//
//circuitgen:guard circuit=api errors=ErrDown observe_only=true
type API interface {
	Get(ctx context.Context) error
	//circuitgen:circuit api-put rate=50% min_calls=20 window_calls=100
	Put(ctx context.Context) error
}
