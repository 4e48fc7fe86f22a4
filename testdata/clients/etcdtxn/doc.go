// Package etcdtxn guards etcd's key-value client, whose transactions are
// built: kv.Txn(ctx).If(…).Then(…).Commit(). Txn and the builder's If,
// Then and Else take no claim and return the clientv3.Txn guarded, as
// the same run guards clientv3.Txn; Commit, the terminal call, carries
// the error and runs through the circuit.
package etcdtxn

//go:generate go tool circuitgen -manifest circuitgen.yaml
