package copies

import (
	"context"
	"time"
)

// DefaultBound is the stall bound of a store's copies when its option
// gives none: how long after the send time of the last heartbeat the server
// answered a copy may still be served.
const DefaultBound = time.Second

// Bound returns d, or DefaultBound when d is not positive.
func Bound(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultBound
	}
	return d
}

// MaxPause bounds the pause between two sessions of a stream that keeps
// failing (Keep).
const MaxPause = 30 * time.Second

// Keep runs the invalidation stream until ctx ends: session after session,
// every copy dropped after each. It pauses between two sessions, during
// which calls read the server: a quarter of bound after a session that went
// live (called Up), and twice the last pause after one that did not, up to
// MaxPause, so that a stream the server refuses for good (no trigger, an
// ACL that forbids tracking) is retried ever less often rather than every
// quarter of bound.
func (c *Cache) Keep(ctx context.Context, bound time.Duration, session func(context.Context) error) {
	pause := bound / 4
	for ctx.Err() == nil {
		ups := c.ups.Load()
		_ = session(ctx) // its error is the server's to report: calls read the server meanwhile
		c.Down()
		if c.ups.Load() != ups {
			pause = bound / 4
		} else if pause < MaxPause/2 {
			pause *= 2
		} else {
			pause = MaxPause
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}
