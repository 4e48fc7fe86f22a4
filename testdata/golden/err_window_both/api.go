package errwindowboth

import (
	"context"
	"errors"
)

// ErrDown is the dependency's failure.
var ErrDown = errors.New("down")

// API gives its rate both a span of time and a count of calls.
//
//circuitgen:guard circuit=api errors=ErrDown rate=50% min_calls=20 window=1m window_calls=100
type API interface {
	Get(ctx context.Context) error
}
