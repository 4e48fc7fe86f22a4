package sqlstore_test

import (
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// TestCachedClock checks that a cached store tells the Breaker the
// database's time (driver.Clock) for the decisions it makes on copies,
// which come without it: the buckets of window counts then follow one
// clock across the fleet, not each process's own.
func TestCachedClock(t *testing.T) {
	s, db := cachedPostgres.newStore(t)
	clock, ok := any(s).(driver.Clock)
	if !ok {
		t.Fatal("a cached store is not a driver.Clock: decisions on copies take the local clock")
	}
	ctx := t.Context()
	if _, _, err := s.Bind("billing-api").Load(ctx); err != nil {
		t.Fatal(err)
	}
	var server time.Time
	if err := db.QueryRowContext(ctx, "SELECT clock_timestamp()").Scan(&server); err != nil {
		t.Fatal(err)
	}
	if d := clock.Now().Sub(server); d < -50*time.Millisecond || d > 50*time.Millisecond {
		t.Errorf("store's Now is %v off the database's time", d)
	}
}
