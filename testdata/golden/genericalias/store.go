package genericalias

import (
	"context"
	"errors"
)

// ErrUnavailable is returned when the store cannot be reached.
var ErrUnavailable = errors.New("store unavailable")

// Store is a generic key-value store, not guarded itself.
type Store[K comparable, V any] interface {
	Get(ctx context.Context, key K) (V, error)
	Put(ctx context.Context, key K, value V) error
}

// IntStore is an alias of an instance: its wrapper has no type
// parameters.
//
//circuitgen:guard circuit=ints errors=ErrUnavailable
type IntStore = Store[int, string]

// Names is a type defined from an instance.
//
//circuitgen:guard circuit=names errors=ErrUnavailable
type Names Store[string, []string]

// KeyStore is a generic alias: its wrapper has the alias's type
// parameters.
//
//circuitgen:guard circuit=keys errors=ErrUnavailable
type KeyStore[V any] = Store[string, V]
