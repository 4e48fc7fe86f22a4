package generic

import (
	"context"
	"errors"
)

// ErrUnavailable is returned when the store cannot be reached.
var ErrUnavailable = errors.New("store unavailable")

// Number is a numeric constraint.
type Number interface{ ~int | ~int64 | ~float64 }

// Store is a generic key-value store.
//
//circuitgen:guard circuit=kv errors=ErrUnavailable
type Store[K comparable, V any, N Number] interface {
	Get(ctx context.Context, key K) (V, error)
	Put(ctx context.Context, key K, value V) error
	Sum(ctx context.Context, keys ...K) (N, error)
	//circuitgen:circuit kv-scan
	Scan(ctx context.Context, fn func(K, V) bool) (map[K]V, error)
}
