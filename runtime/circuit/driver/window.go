package driver

import (
	"context"
	"sync/atomic"
	"time"
)

// The rate rule looks at a circuit's recent calls through a window: the
// last window of a policy, cut into WindowBuckets buckets of Window/WindowBuckets
// each, aligned on the store's clock (bucket i holds the calls completed in
// [i·width, (i+1)·width) since the Unix epoch). The window at a time is the
// bucket holding that time and the WindowBuckets-1 before it, so it reaches
// back between Window−width and Window. This file is the one definition of
// that arithmetic; every store that keeps window counts keeps them in
// WindowCells.
//
// A window counts the calls of one closed period of one record: its epoch
// (WindowEpoch) changes when a probe closes the circuit again or Clear
// removes the record, and the first call of the new epoch empties the
// window, so the failures that opened the circuit cannot open it again.

// WindowBuckets is the number of buckets a window is cut into.
const WindowBuckets = 10

// Counts are the calls of a window: completed calls (Success or Failure;
// Ignored never counts) and, among them, failures.
type Counts struct {
	Calls, Failures uint64
}

// Bucket returns the index of the bucket of a window of span w that holds t.
func Bucket(t time.Time, w time.Duration) int64 {
	width := int64(w / WindowBuckets)
	n := t.UnixNano()
	b := n / width
	if n < 0 && n%width != 0 {
		b-- // floor, for times before 1970
	}
	return b
}

// WindowCells holds one window's counts, lock-free: a cell per bucket,
// holding the calls and failures of the latest bucket that used it. Each
// count is a 64-bit word whose upper half tags it with the low 32 bits of
// its bucket index, so that a word left from an earlier bucket is seen as
// empty, and that starting a bucket and counting in it is one
// compare-and-swap with no lock. WindowCells may live in memory shared by
// processes (the file store maps it from a file); its zero value is an
// empty window.
type WindowCells struct {
	epoch atomic.Uint64
	cells [WindowBuckets]struct {
		calls, failures atomic.Uint64
	}
}

const countMask = 1<<32 - 1

// Add counts one completed call of epoch e in bucket b: a failure when
// failure is set, else a success. The first call of a new epoch empties the
// window; a call of an epoch that another call has since replaced is not
// counted.
//
// The change of epoch is not atomic with the emptying that follows it, an
// imprecision accepted to keep Add free of locks: a call counted at the
// moment the epoch changes may be lost (another call of the new epoch
// counted it before the emptying) or land in the new window (a call of the
// old epoch that checked the epoch before the change counts after the
// emptying). Only calls settling at that moment are concerned, one count
// each, and the epoch changes only when a circuit closes again or is
// cleared.
func (c *WindowCells) Add(e uint64, b int64, failure bool) {
	if c.epoch.Load() != e {
		counted, fresh := enter(&c.epoch, e)
		if !counted {
			return
		}
		if fresh {
			for i := range c.cells {
				c.cells[i].calls.Store(0)
				c.cells[i].failures.Store(0)
			}
		}
	}
	cell := &c.cells[bucketSlot(b)]
	add(&cell.calls, b)
	if failure {
		add(&cell.failures, b)
	}
}

// enter makes e the epoch of the cells whose epoch is held in epoch, for a
// call of epoch e: counted is false for a call of an earlier generation
// settling late, which is not counted; fresh is true when this call changed
// the epoch, and must empty the cells.
func enter(epoch *atomic.Uint64, e uint64) (counted, fresh bool) {
	for h := epoch.Load(); h != e; h = epoch.Load() {
		if EpochBefore(e, h) {
			return false, false
		}
		if epoch.CompareAndSwap(h, e) {
			return true, true
		}
	}
	return true, false
}

// lateBuckets bounds how far behind the bucket its cell holds a call may
// come and still be dropped as late rather than start the cell afresh: a
// process stopped between reading the clock and counting comes back with
// an old bucket. The tag keeps 32 bits of the bucket, so a cell idle for
// 2³²−lateBuckets buckets (13.6 years of the smallest window) and no
// longer would drop calls until its tag is lateBuckets behind; a process
// stopped for over lateBuckets buckets (19 days of it) empties a cell.
const lateBuckets = 1 << 24

// add counts one in w for bucket b: it starts w afresh when w holds an
// earlier bucket, and saturates rather than wrap.
func add(w *atomic.Uint64, b int64) {
	tag := uint64(uint32(b)) << 32
	for {
		old := w.Load()
		next := tag | 1
		if d := int32(uint32(old>>32) - uint32(b)); old != 0 && d > 0 && d <= lateBuckets {
			return // a later bucket already uses the cell: b is past
		}
		if old&^countMask == tag {
			if old&countMask == countMask {
				return
			}
			next = old + 1
		}
		if w.CompareAndSwap(old, next) {
			return
		}
	}
}

// Counts returns the counts of epoch e in the window whose latest bucket
// is b.
func (c *WindowCells) Counts(e uint64, b int64) Counts {
	var n Counts
	if c.epoch.Load() != e {
		return n
	}
	for i := range int64(WindowBuckets) {
		cell := &c.cells[bucketSlot(b-i)]
		tag := uint64(uint32(b-i)) << 32
		if w := cell.calls.Load(); w&^countMask == tag {
			n.Calls += w & countMask
		}
		if w := cell.failures.Load(); w&^countMask == tag {
			n.Failures += w & countMask
		}
	}
	n.Failures = min(n.Failures, n.Calls) // a failure is counted in calls first
	return n
}

func bucketSlot(b int64) int64 {
	s := b % WindowBuckets
	if s < 0 {
		s += WindowBuckets
	}
	return s
}

// WindowEpoch returns the epoch of rec's window: a hash of its incarnation
// in the upper 32 bits and its generation in the lower, so that the window
// of a later generation is never emptied by a call of an earlier one. A
// nil rec, no record, has the epoch of the first record (FirstIncarnation,
// Generation 1): the calls counted before it was created stay counted.
func WindowEpoch(rec *Record) uint64 {
	inc, gen := FirstIncarnation, uint64(1)
	if rec != nil {
		inc, gen = rec.Incarnation, rec.Generation
	}
	h := uint32(2166136261) // FNV-1a
	for i := range len(inc) {
		h = (h ^ uint32(inc[i])) * 16777619
	}
	return uint64(h|1)<<32 | uint64(uint32(gen))
}

// EpochBefore reports whether window epoch e is of an earlier generation
// of the same incarnation than epoch h: a call of e settling late, after
// a probe closed the circuit, is not counted in h's window. Epochs of
// other incarnations are not ordered.
func EpochBefore(e, h uint64) bool {
	return h != 0 && h>>32 == e>>32 && int32(uint32(h)-uint32(e)) > 0
}

// WindowStore is implemented by a Store that keeps the window counts of the
// rate rule (Policy.FailureRate) itself, shared by every process that uses
// it, such as the file store, which maps them from a file in its directory.
// With a Store that is not a WindowStore, each Breaker counts in its own
// memory, and the rate rule sees that process's calls only.
type WindowStore interface {
	// WindowCells returns the cells of the named circuit's window of span w
	// (a valid Policy.Window). The Breaker asks once per circuit and span,
	// and then counts in them with atomic operations only.
	WindowCells(name string, w time.Duration) (*WindowCells, error)
}

// WindowSharer is implemented by a distributed Store that keeps the window
// counts of the rate rule on its server, so that every process of a fleet
// feeds one window. A process does not send each call: it counts locally
// and flushes its counts in batches, one round trip per flush (FlushEvery,
// FlushBatch), and decides with the server's counts as of its last flush
// plus its own counts not yet flushed.
//
// That delays an opening: a call counted in one process reaches the server
// at that process's next flush, at most FlushEvery later while the process
// keeps completing calls, and reaches another process's decisions at that
// one's next flush, at most FlushEvery after that. An opening that the
// fleet's calls justify is therefore made at most 2×FlushEvery (plus two
// round trips) after it is justified, by the next failure after that; a
// process that stops completing calls keeps its last unflushed counts (at
// most FlushBatch calls) to itself.
type WindowSharer interface {
	// ShareWindow adds add (each bucket's calls counted since the last
	// flush) to the named circuit's window of span w and epoch e on the
	// server, and returns the server's counts of the window whose latest
	// bucket is b, in one round trip. The server's counts of another epoch
	// are dropped first, unless e is of an earlier generation of the same
	// incarnation: then add is dropped.
	//
	// The Breaker takes b from the store's time (the time its Load
	// returns, else its Clock: a store that serves copies without the
	// server's time should be a Clock that follows the server's), so that
	// every process buckets by one clock. The server drops the buckets
	// that left the window by the earlier of b and its own time, and adds
	// no counts to a bucket ahead of its own time, so that a process whose
	// clock runs ahead cannot empty the fleet's window.
	ShareWindow(ctx context.Context, name string, w time.Duration, e uint64, b int64, add []BucketCounts) (Counts, error)
}

// BucketCounts are the counts of one bucket of a window (see Bucket).
type BucketCounts struct {
	Bucket int64
	Counts
}

// Batching of the window counts sent to a WindowSharer.
const (
	// FlushEvery bounds how long a process keeps counts unflushed while it
	// completes calls; for windows shorter than 10 s, a tenth of the window.
	FlushEvery = time.Second
	// FlushBatch is how many counted calls make a process flush at once.
	FlushBatch = 100
)
