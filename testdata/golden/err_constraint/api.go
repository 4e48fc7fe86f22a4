package errconstraint

import (
	"context"
	"errors"
)

// ErrDown is a failure.
var ErrDown = errors.New("down")

// Cons is a constraint: it has a type set, so no value has its type.
//
//circuitgen:guard circuit=cons errors=ErrDown
type Cons interface {
	~int
	M(ctx context.Context) error
}

// Comparable embeds comparable.
//
//circuitgen:guard circuit=cmp errors=ErrDown
type Comparable interface {
	comparable
	M(ctx context.Context) error
}
