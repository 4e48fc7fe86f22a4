package driver

import (
	"math/bits"
	"sync/atomic"
)

// A count window is the other window of the rate rule: the last n completed
// calls of a circuit's closed period (Policy.WindowCalls), whatever their
// time. Like a time window it counts the calls of one epoch (WindowEpoch),
// and the first call of a new epoch empties it. This file is the one
// definition of its arithmetic; every store that keeps count windows keeps
// them in CallCells.

// MaxWindowCalls is the longest count window, in calls.
const MaxWindowCalls = 10_000

// callWords is the number of 64-bit words of a CallCells' ring.
const callWords = (MaxWindowCalls + 63) / 64

// CallCells holds one count window, lock-free: the number of calls counted
// in its epoch, and a ring of failure bits. The s-th call of the epoch
// (from 0) in a window of n calls sets bit s mod n when it failed and
// clears it when it succeeded, so that the first n bits are the outcomes of
// the last n calls. A call costs one atomic addition, and a second atomic
// operation only when its outcome differs from that of the call n before
// it. CallCells may live in memory shared by processes (the file store maps
// it from a file); its zero value is an empty window.
//
// Each CallCells serves one n. Two calls n apart that settle at the same
// moment may leave the bit of the earlier one, an imprecision of one call
// accepted to keep Add free of locks; as for WindowCells, so may a call
// counted at the moment the epoch changes.
type CallCells struct {
	epoch atomic.Uint64
	calls atomic.Uint64
	ring  [callWords]atomic.Uint64
}

// Add counts one completed call of epoch e in the window of the last n
// calls, 1..MaxWindowCalls: a failure when failure is set, else a success.
// The first call of a new epoch empties the window; a call of an epoch that
// another call has since replaced is not counted.
func (c *CallCells) Add(e uint64, n int, failure bool) {
	if c.epoch.Load() != e {
		counted, fresh := enter(&c.epoch, e)
		if !counted {
			return
		}
		if fresh {
			c.calls.Store(0)
			for i := range c.ring {
				c.ring[i].Store(0)
			}
		}
	}
	s := (c.calls.Add(1) - 1) % uint64(n)
	w, bit := &c.ring[s/64], uint64(1)<<(s%64)
	switch set := w.Load()&bit != 0; {
	case failure && !set:
		w.Or(bit)
	case !failure && set:
		w.And(^bit)
	}
}

// Counts returns the counts of epoch e in the window of the last n calls:
// at most n calls, and the failures among them.
func (c *CallCells) Counts(e uint64, n int) Counts {
	if c.epoch.Load() != e {
		return Counts{}
	}
	calls := min(c.calls.Load(), uint64(n))
	var failures int
	for i := range n / 64 {
		failures += bits.OnesCount64(c.ring[i].Load())
	}
	if r := n % 64; r > 0 {
		failures += bits.OnesCount64(c.ring[n/64].Load() & (1<<r - 1))
	}
	return Counts{Calls: calls, Failures: min(uint64(failures), calls)}
}

// CallWindowStore is implemented by a Store that keeps the count windows of
// the rate rule (Policy.WindowCalls) itself, shared by every process that
// uses it, as the file store does. With a Store that is not one, each
// Breaker counts a count window in its own memory, and the rate rule sees
// the last calls of that process only, whether or not the store shares time
// windows.
type CallWindowStore interface {
	// CallCells returns the cells of the named circuit's window of the last
	// n calls (a valid Policy.WindowCalls). The Breaker asks once per
	// circuit and n, and then counts in them with atomic operations only.
	CallCells(name string, n int) (*CallCells, error)
}
