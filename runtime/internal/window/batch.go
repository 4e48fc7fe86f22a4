package window

import (
	"context"
	"sync"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// flushTimeout bounds a flush, which runs detached from the caller's
// context: a call that failed with context.DeadlineExceeded must still be
// counted.
const flushTimeout = 10 * time.Second

// batch is a process's side of a shared window: its unflushed counts, the
// counts of the flush in flight, and the server's counts as of its last
// flush. One flush at a time is in flight, so that the server's counts
// that a reply brings are never older than those the batch holds.
type batch struct {
	mu        sync.Mutex
	span      time.Duration
	epoch     uint64
	pending   [driver.WindowBuckets]driver.BucketCounts // by bucketSlot
	n         int                                       // calls pending
	flying    []driver.BucketCounts                     // the flush in flight, nil when none
	flight    uint64                                    // the number of the latest flush taken
	remote    driver.Counts                             // the server's, as of the last flush
	remoteAt  int64                                     // the bucket of the last flush
	lastFlush time.Time
}

// batchFor returns the circuit's batch for windows of span w: the one last
// used (a circuit has one policy, in practice), found without allocating.
func (c *Circuit) batchFor(w time.Duration) *batch {
	if bt := c.batch.Load(); bt != nil && bt.span == w {
		return bt
	}
	v, _ := c.batches.LoadOrStore(w, &batch{span: w})
	bt := v.(*batch)
	c.batch.Store(bt)
	return bt
}

// flushEvery is driver.FlushEvery for a window of span w.
func flushEvery(w time.Duration) time.Duration { return min(driver.FlushEvery, w/driver.WindowBuckets) }

// share counts a call of outcome o (when add is set) at now in the shared
// window of the named circuit, whose record is rec, under p, flushing to s
// when a batch is due, and returns the counts to decide with and whether
// it counted the call (Count). A call of an earlier generation settling
// late is not counted (driver.EpochBefore).
//
// A flush is a write: it runs detached from the caller's cancellation
// (bounded by flushTimeout), and when it fails its counts go back to the
// batch, to be sent by the next flush.
func (c *Circuit) share(ctx context.Context, s driver.WindowSharer, name string, p *machine.Policy, rec *driver.Record, now time.Time, o machine.Outcome, add bool) (driver.Counts, bool, error) {
	bt := c.batchFor(p.Window)
	e, bk := driver.WindowEpoch(rec), driver.Bucket(now, p.Window)

	bt.mu.Lock()
	if driver.EpochBefore(e, bt.epoch) {
		bt.mu.Unlock()
		return driver.Counts{}, false, nil
	}
	if bt.epoch != e { // a new closed period: a fresh window
		bt.epoch, bt.pending, bt.n, bt.remote, bt.remoteAt = e, [driver.WindowBuckets]driver.BucketCounts{}, 0, driver.Counts{}, 0
		bt.flying, bt.lastFlush = nil, time.Time{}
	}
	if add {
		bt.put(driver.BucketCounts{Bucket: bk, Counts: driver.Counts{Calls: 1, Failures: b2u(o == machine.Failure)}})
	}
	var flush []driver.BucketCounts
	var flight uint64
	last := bt.lastFlush
	if bt.flying == nil && (bt.n >= driver.FlushBatch || now.Sub(bt.lastFlush) >= flushEvery(p.Window)) {
		for i, c := range bt.pending {
			if c.Calls > 0 && c.Bucket > bk-driver.WindowBuckets {
				flush = append(flush, c)
			}
			bt.pending[i] = driver.BucketCounts{}
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

	if flush == nil && o != machine.Failure {
		return driver.Counts{}, add, nil
	}
	if flush != nil {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		remote, err := s.ShareWindow(fctx, name, p.Window, e, bk, flush)
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
			return driver.Counts{}, add, err // the call is in the batch
		}
		if mine {
			bt.remote, bt.remoteAt = remote, bk
		}
		decide = bt.local(bk)
		bt.mu.Unlock()
	}
	return decide, add, nil
}

// put adds c to the pending counts, unless a later bucket has taken its
// slot (then c has left the window). The caller holds bt.mu.
func (bt *batch) put(c driver.BucketCounts) {
	p := &bt.pending[bucketSlot(c.Bucket)]
	switch {
	case p.Calls > 0 && p.Bucket > c.Bucket:
		return
	case p.Bucket != c.Bucket:
		*p = driver.BucketCounts{Bucket: c.Bucket}
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
func (bt *batch) local(bk int64) driver.Counts {
	var n driver.Counts
	if bk-bt.remoteAt < driver.WindowBuckets {
		n = bt.remote
	}
	for _, cs := range [][]driver.BucketCounts{bt.pending[:], bt.flying} {
		for _, c := range cs {
			if c.Calls > 0 && c.Bucket > bk-driver.WindowBuckets && c.Bucket <= bk {
				n.Calls += c.Calls
				n.Failures += c.Failures
			}
		}
	}
	return n
}

// bucketSlot is the slot of bucket b among a window's driver.WindowBuckets.
func bucketSlot(b int64) int64 {
	s := b % driver.WindowBuckets
	if s < 0 {
		s += driver.WindowBuckets
	}
	return s
}
