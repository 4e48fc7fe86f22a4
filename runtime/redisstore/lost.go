package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// A circuit's key, once written, is never absent again: a Clear leaves a
// tombstone. So a process that has found the key (or written it) and then
// finds no key at all knows the record was lost: the server restarted
// without persistence, was flushed, or evicted it. It does not know what
// the record said, and so treats the circuit as unknown, not closed: it
// writes it open with its cooldown already over, unless another process
// has written it first, so that the next call anywhere claims the
// half-open probe, one at a time, and the circuit closes again only when a
// probe succeeds. It reports the loss (driver.ErrLost).

// lost handles the loss of the circuit's key, found by a read at the
// server's time now: it writes the placeholder record unless another
// process wrote one first, and returns the record read anew.
func (b *bound) lost(ctx context.Context, now time.Time) (*driver.Record, time.Time, error) {
	b.s.notify(fmt.Errorf("%w: redisstore: the record of circuit %q (%s) is gone, though it was not cleared: the server lost it (a restart without persistence, a flush, an eviction); the circuit is treated as open, its next call a probe",
		driver.ErrLost, b.name, b.key))
	next := &driver.Record{
		Name: b.name, State: driver.StateOpen, Generation: 1, Incarnation: writeID(), Version: 1,
		OpenUntil: now, UpdatedAt: now,
	}
	err := b.s.replace(ctx, b.key, b.name, nil, next, writeID())
	if err != nil && !errors.Is(err, driver.ErrConflict) {
		return nil, now, err
	}
	rec, now, _, err := b.s.loadKey(ctx, b.key)
	return rec, now, err
}
