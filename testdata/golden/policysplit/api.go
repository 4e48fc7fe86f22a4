package policysplit

import (
	"context"
	"errors"
)

// ErrDown is a failure.
var ErrDown = errors.New("down")

// Split gives the rate rule; a method turns the threshold rule off and
// lets its cooldown grow.
//
//circuitgen:guard circuit=split rate=50% min_calls=10 window=1m cooldown=5s errors=ErrDown
type Split interface {
	//circuitgen:circuit split-get threshold=0 max_cooldown=20s
	Get(ctx context.Context) error
	Put(ctx context.Context) error
}

// Listed is listed in the manifest, whose defaults turn the threshold
// rule off.
type Listed interface {
	Get(ctx context.Context) error
}
