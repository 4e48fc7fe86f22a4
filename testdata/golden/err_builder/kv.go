package errbuilder

import (
	"context"
	"errors"
)

// ErrUnavailable is the server's outage.
var ErrUnavailable = errors.New("unavailable")

// KV returns its transactions unguarded, which would leave Commit outside
// every circuit.
//
//circuitgen:guard circuit=kv errors=ErrUnavailable
type KV interface {
	//circuitgen:circuit kv guard_returned=false
	Txn(ctx context.Context) Txn
}

// Txn is a transaction builder.
//
//circuitgen:guard circuit=kv errors=ErrUnavailable
type Txn interface {
	If(cs ...string) Txn
	Commit() (bool, error)
}
