package builder

import (
	"context"
	"errors"
)

// ErrUnavailable is the server's outage.
var ErrUnavailable = errors.New("unavailable")

// Cmp, Op and TxnResponse are a transaction's comparisons, operations
// and answer, as etcd's clientv3.
type (
	Cmp         struct{ Key string }
	Op          struct{ Key, Val string }
	TxnResponse struct{ Succeeded bool }
)

// KV is a key-value client whose transactions are built: Txn takes no
// claim and returns the Txn guarded, as the same run guards Txn.
//
//circuitgen:guard circuit=kv errors=ErrUnavailable
type KV interface {
	Get(ctx context.Context, key string) (string, error)
	Txn(ctx context.Context) Txn
}

// Txn is a transaction builder: If, Then and Else return it, guarded,
// and Commit, its terminal call, carries the error.
//
//circuitgen:guard circuit=kv errors=ErrUnavailable
type Txn interface {
	If(cs ...Cmp) Txn
	Then(ops ...Op) Txn
	Else(ops ...Op) Txn
	Commit() (*TxnResponse, error)
}
