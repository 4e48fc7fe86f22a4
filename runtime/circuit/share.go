package circuit

import (
	"context"
	"sync"
	"time"
)

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

// batch is a process's side of a shared window: its unflushed counts, the
// counts of the flush in flight, and the server's counts as of its last
// flush. One flush at a time is in flight, so that the server's counts
// that a reply brings are never older than those the batch holds.
type batch struct {
	mu        sync.Mutex
	span      time.Duration
	epoch     uint64
	pending   [WindowBuckets]BucketCounts // by bucketSlot
	n         int                         // calls pending
	flying    []BucketCounts              // the flush in flight, nil when none
	flight    uint64                      // the number of the latest flush taken
	remote    Counts                      // the server's, as of the last flush
	remoteAt  int64                       // the bucket of the last flush
	lastFlush time.Time
}

// batchFor returns the circuit's batch for windows of span w: the one last
// used (a circuit has one policy, in practice), found without allocating.
func (r *ref) batchFor(w time.Duration) *batch {
	if bt := r.batch.Load(); bt != nil && bt.span == w {
		return bt
	}
	v, _ := r.batches.LoadOrStore(w, &batch{span: w})
	bt := v.(*batch)
	r.batch.Store(bt)
	return bt
}

// flushEvery is FlushEvery for a window of span w.
func flushEvery(w time.Duration) time.Duration { return min(FlushEvery, w/WindowBuckets) }

// countShared counts a call of outcome o (when add is set) at now in the
// store's shared window of r under p, flushing when a batch is due, and returns
// the counts to decide with.
//
// A flush is a write: it runs detached from the caller's cancellation
// (bounded by settleTimeout), and when it fails its counts go back to the
// batch, to be sent by the next flush.
func (b *Breaker) countShared(ctx context.Context, r *ref, p Policy, rec *Record, now time.Time, o Outcome, add bool) (Counts, error) {
	bt := r.batchFor(p.Window)
	e, bk := WindowEpoch(rec), Bucket(now, p.Window)

	bt.mu.Lock()
	if bt.epoch != e { // a new closed period: a fresh window
		bt.epoch, bt.pending, bt.n, bt.remote, bt.remoteAt = e, [WindowBuckets]BucketCounts{}, 0, Counts{}, 0
		bt.flying, bt.lastFlush = nil, time.Time{}
	}
	if add {
		bt.put(BucketCounts{Bucket: bk, Counts: Counts{Calls: 1, Failures: b2u(o == Failure)}})
	}
	var flush []BucketCounts
	var flight uint64
	last := bt.lastFlush
	if bt.flying == nil && (bt.n >= FlushBatch || now.Sub(bt.lastFlush) >= flushEvery(p.Window)) {
		for i, c := range bt.pending {
			if c.Calls > 0 && c.Bucket > bk-WindowBuckets {
				flush = append(flush, c)
			}
			bt.pending[i] = BucketCounts{}
		}
		bt.n = 0
		bt.lastFlush = now
		if flush != nil {
			bt.flying = flush
			bt.flight++
			flight = bt.flight
		}
	}
	decide := bt.local(bk)
	bt.mu.Unlock()

	if flush == nil && o != Failure {
		return Counts{}, nil
	}
	if flush != nil {
		fctx, cancel := detach(ctx)
		remote, err := b.sharer.ShareWindow(fctx, r.name, p.Window, e, bk, flush)
		cancel()
		bt.mu.Lock()
		mine := bt.epoch == e && bt.flight == flight
		if mine {
			bt.flying = nil
		}
		if err != nil {
			if mine { // the counts go back, to be sent again
				for _, c := range flush {
					bt.put(c)
				}
				bt.lastFlush = last
			}
			bt.mu.Unlock()
			return Counts{}, &StateError{Name: r.name, Op: "window", Err: err}
		}
		if mine {
			bt.remote, bt.remoteAt = remote, bk
		}
		decide = bt.local(bk)
		bt.mu.Unlock()
	}
	return decide, nil
}

// put adds c to the pending counts, unless a later bucket has taken its
// slot (then c has left the window). The caller holds bt.mu.
func (bt *batch) put(c BucketCounts) {
	p := &bt.pending[bucketSlot(c.Bucket)]
	switch {
	case p.Calls > 0 && p.Bucket > c.Bucket:
		return
	case p.Bucket != c.Bucket:
		*p = BucketCounts{Bucket: c.Bucket}
	}
	p.Calls += c.Calls
	p.Failures += c.Failures
	bt.n += int(c.Calls)
}

// b2u is 1 for true, 0 for false.
func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// local returns the counts to decide with at bucket bk: the server's as of
// the last flush, if that was within the window, those in flight and the
// pending ones. The caller holds bt.mu.
func (bt *batch) local(bk int64) Counts {
	var n Counts
	if bk-bt.remoteAt < WindowBuckets {
		n = bt.remote
	}
	for _, cs := range [][]BucketCounts{bt.pending[:], bt.flying} {
		for _, c := range cs {
			if c.Calls > 0 && c.Bucket > bk-WindowBuckets && c.Bucket <= bk {
				n.Calls += c.Calls
				n.Failures += c.Failures
			}
		}
	}
	return n
}
