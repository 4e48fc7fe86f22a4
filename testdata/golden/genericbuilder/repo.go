package genericbuilder

import (
	"context"
	"errors"
)

// ErrDown is the store's outage.
var ErrDown = errors.New("down")

// Repo returns instances of generic interfaces the same run guards: they
// come back guarded, on the repo circuit where names match.
//
//circuitgen:guard circuit=repo errors=ErrDown
type Repo[T any] interface {
	Tx(ctx context.Context) (Tx[T], error)
	Counts(ctx context.Context) (Tx[int], error)
	Batch() Batch[T]
}

// Tx is a transaction.
//
//circuitgen:guard circuit=repo errors=ErrDown
type Tx[T any] interface {
	Put(ctx context.Context, v T) error
	Commit(ctx context.Context) error
}

// Batch is a generic builder: Add returns it, Send carries the error.
//
//circuitgen:guard circuit=batch errors=ErrDown
type Batch[T any] interface {
	Add(v T) Batch[T]
	Send(ctx context.Context) error
}

// Ints is an instance of Tx guarded as its own interface: a Tx[int]
// comes back as an Ints only.
//
//circuitgen:guard circuit=ints errors=ErrDown
type Ints = Tx[int]
