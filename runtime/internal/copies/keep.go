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

// Beat returns how long after a heartbeat the next is sent: the bound in
// an idle process (no Load asked for a copy within the last bound), half
// of it in a busy one. The freshness rule does not depend on it: a copy is
// served until the bound after the send time of the last heartbeat
// answered, whenever heartbeats are sent. It sets what the rule costs. An
// idle process sends one heartbeat a bound (1 a second by default), so
// its copies lapse each bound for as long as the next heartbeat takes to
// be answered, and a Load meanwhile reads the server, as without copies. A
// busy one sends two a bound, so the next heartbeat's answer arrives
// before the last one's bound ends, and its copies do not lapse while
// answers take less than half the bound.
func (c *Cache) Beat(bound time.Duration) time.Duration {
	if c.Busy(bound) {
		return bound / 2
	}
	return bound
}

// Busy reports whether a Load asked for a copy within the last bound.
func (c *Cache) Busy(bound time.Duration) bool { return c.Clock()-c.wanted.Load() < int64(bound) }

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
