package redisstore_test

import (
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// TestCachedClock checks that a cached store tells the Breaker the
// server's time (driver.Clock) for the decisions it makes on copies,
// which come without it: the buckets of window counts then follow one
// clock across the fleet, not each process's own.
func TestCachedClock(t *testing.T) {
	c := newClient(t, testenv.RedisURL(t))
	s := newCached(t, c, testPrefix(t, c))
	clock, ok := any(s).(driver.Clock)
	if !ok {
		t.Fatal("a cached store is not a driver.Clock: decisions on copies take the local clock")
	}
	ctx := t.Context()
	if _, _, err := s.Load(ctx, "billing-api"); err != nil {
		t.Fatal(err)
	}
	server, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := clock.Now().Sub(server); d < -50*time.Millisecond || d > 50*time.Millisecond {
		t.Errorf("store's Now is %v off the server's TIME", d)
	}
}
