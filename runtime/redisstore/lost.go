package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/lost"
)

// A circuit's key, once written, is absent again only when a Clear's
// tombstone expires, a day later. So a process that last found (or wrote)
// a record, not a tombstone, and then finds no key at all knows the record
// was lost: the server restarted without persistence, was flushed, or
// evicted it. (A process idle on a circuit for a day across another's
// Clear takes the tombstone's expiry for a loss: the circuit then probes
// once before it admits calls.) And versions only grow within an
// incarnation, and a record of another incarnation is made after the Clear
// that ended the one before, so a closed record older than one the process
// saw (lost.Older: an earlier version, or another incarnation's written
// earlier by the server's clock) means the dataset was rolled back
// (restored from a backup). Either way
// the process does not know what the record said, and treats the circuit
// as unknown, not closed: it writes it open with its cooldown already over
// (lost.Unknown) unless another process has written it first, so that the
// next call anywhere claims the half-open probe, one at a time, and the
// circuit closes again only when a probe succeeds. It reports the loss
// (driver.ErrLost).

// lost handles the loss of the circuit's record, found by a read at the
// server's time now: prev is what the read found (nil: no key), which it
// replaces with lost.Unknown unless another process wrote first. It
// returns the record it wrote, or the one read anew after another
// process's write; a key lost again meanwhile (gone before the read anew,
// as under an eviction storm) is made unknown again, a few times, and is
// never returned as no record: that would admit calls as closed.
func (b *bound) lost(ctx context.Context, now time.Time, prev *driver.Record) (*driver.Record, time.Time, error) {
	what := "is gone, though it was not cleared: the server lost it (a restart without persistence, a flush, an eviction)"
	if prev != nil {
		what = fmt.Sprintf("is older than one this process saw (it holds version %d of incarnation %s, written %s): the server's dataset was rolled back", prev.Version, prev.Incarnation, prev.UpdatedAt.Format(time.RFC3339Nano))
	}
	b.s.reports.Send(fmt.Errorf("%w: redisstore: the record of circuit %q (%s) %s; the circuit is treated as unknown, its next call a probe",
		driver.ErrLost, b.name, b.key, what))
	rec, at, err := lost.MakeUnknown(b.name, now, prev, b.last, driver.NewID,
		func(prev, next *driver.Record) error {
			return b.s.compareAndSet(ctx, b.key, b.name, prev, next, driver.NewID())
		},
		func() (*driver.Record, time.Time, bool, error) {
			rec, at, exists, err := b.s.loadKey(ctx, b.key)
			return rec, at, !exists, err
		})
	if errors.Is(err, lost.ErrLostAgain) {
		err = fmt.Errorf("redisstore: the record of circuit %q (%s): %w", b.name, b.key, err)
	}
	if err != nil {
		return nil, at, err
	}
	b.seen.Store(rec != nil)
	return rec, at, nil
}
