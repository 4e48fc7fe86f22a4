package genericseq

import (
	"context"
	"errors"
	"iter"
)

// ErrUnavailable is the store's outage.
var ErrUnavailable = errors.New("store: unavailable")

// Entry is one key and its value.
type Entry[K comparable, V any] struct {
	Key   K
	Value V
}

// Store is a generic store whose scans are fallible streams of its own
// type parameters.
//
//circuitgen:guard circuit=kv errors=ErrUnavailable
type Store[K comparable, V any] interface {
	Get(ctx context.Context, key K) (V, error)
	// Values streams values; the first error ends it.
	Values(ctx context.Context, keys ...K) iter.Seq2[V, error]
	// Entries streams entries of a generic type of the package.
	Entries(ctx context.Context) iter.Seq2[Entry[K, V], error]
	// Keys cannot fail: it passes through.
	Keys(ctx context.Context) iter.Seq[K]
}
