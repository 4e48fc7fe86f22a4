// Package filestore is circuitgen's default circuit.Store: plain files in
// one directory, shared by every process on one server that opens the same
// directory, with nothing to install.
//
// Use it when the processes that share circuits run on one server with a
// local file system. For several servers, or NFS, use runtime/redisstore
// or runtime/sqlstore. It works on linux and darwin; elsewhere Open returns
// an error naming those stores.
//
// Open checks the directory, or that it can be created, and creates
// nothing: the directory (0700) and its change index appear on the first
// Load, and a circuit's record (0600) on its first write: a circuit has
// none until an outcome changes something. A directory the store cannot
// use is a *DirError saying what to fix. A call on a closed circuit makes
// no system call: the Breaker keeps the record it loaded, and the change
// index every process maps vouches for it (driver.Watcher).
// A store that cannot be read or written fails closed, with a
// *circuit.StateError.
//
// How it works (the files, a write, the change index and its recheck, the
// boot clock) and its threat model (what it survives, and what another
// actor changing its files does) are in the repository's
// docs/file-store.md:
// https://github.com/circuitgen/circuitgen/blob/main/docs/file-store.md
package filestore
