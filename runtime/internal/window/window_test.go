package window

import (
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/alarm"
)

// TestClockReadsOncePerBucket: by the local clock, the circuits of a
// Breaker read the clock once per bucket between them, and each is given a
// time in the bucket that holds the time of its call; by another clock, or
// for a window of calls, each call reads it.
func TestClockReadsOncePerBucket(t *testing.T) {
	const span = 200 * time.Millisecond // buckets of 20ms
	reads := 0
	read := func() time.Time { reads++; return time.Now() }
	circuits := []*Circuit{new(Circuit), new(Circuit)}
	var alarms alarm.Clock
	var ts ticks
	buckets := map[int64]bool{}
	calls := 0
	for end := time.Now().Add(3 * span); time.Now().Before(end); calls++ {
		c := circuits[calls%2] // two circuits, by turns
		// An alarm never rings early; it may ring late on a loaded
		// machine: 100ms is allowed.
		before := driver.Bucket(time.Now().Add(-100*time.Millisecond), span)
		clk := c.clock(&ts, read, &alarms, true, span)
		got := driver.Bucket(clk.Now(), span)
		after := driver.Bucket(time.Now(), span)
		if got > after || got < before {
			t.Fatalf("call %d: bucket %d, want between %d and %d", calls, got, before, after)
		}
		buckets[got] = true
	}
	if reads > len(buckets)+1 || len(buckets) < 10 {
		t.Fatalf("%d reads for %d calls over %d buckets: want one a bucket at most, for both circuits", reads, calls, len(buckets))
	}

	for _, tc := range []struct {
		name  string
		local bool
		span  time.Duration
	}{
		{"not the local clock", false, span},
		{"a window of calls", true, 0},
	} {
		var c Circuit
		reads = 0
		for range 3 {
			clk := c.clock(&ts, read, &alarms, tc.local, tc.span)
			clk.Now()
		}
		if reads != 3 {
			t.Errorf("%s: %d reads for 3 calls, want 3", tc.name, reads)
		}
	}
}
