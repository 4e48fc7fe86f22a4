// Package mapped holds Word, a 64-bit word that may live in memory mapped
// from a file shared by processes, with the atomic operations the file
// store's change index and the rate rule's window cells make on it.
//
// A mapped file may be truncated under a process; touching a word past the
// new end is then a fault, which a caller that set debug.SetPanicOnFault
// turns into a panic it recovers. sync/atomic keeps that working in an
// ordinary build, where its operations are compiled inline, but not under
// the race detector: there each operation touches the word once in Go
// assembly (where a fault is a panic) and then makes the operation in the
// detector's C code on the system stack, where a fault cannot become a
// panic, so that a truncation between the two kills the process ("traceback
// did not unwind completely"). Under the race detector, on amd64 and arm64,
// Word's operations are therefore made in a few lines of assembly of this
// package instead (word_race_*.s); the race detector checks no memory
// outside the Go heap, mapped files included, so it loses nothing by not
// seeing them.
package mapped

import "sync/atomic"

// Word is a 64-bit word operated on atomically; its zero value is 0. Like
// atomic.Uint64, it is 8-byte aligned and must not be copied.
type Word struct {
	v atomic.Uint64
}
