package drivertest

import (
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// testShareWindow checks the server side of the batched window of a store
// that is a driver.WindowSharer: flushes add up, buckets that left the
// window drop out, a new epoch starts afresh, and a flush of an earlier
// generation is not counted.
func testShareWindow(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	ws, ok := s.(driver.WindowSharer)
	if !ok {
		t.Fatalf("%T is not a driver.WindowSharer", s)
	}
	const w = time.Minute
	const e1, e2 = 7<<32 | 1, 7<<32 | 2
	add := func(e uint64, b int64, bc ...driver.BucketCounts) driver.Counts {
		t.Helper()
		n, err := ws.ShareWindow(t.Context(), circuitName, w, e, b, bc)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	bc := func(b int64, calls, failures uint64) driver.BucketCounts {
		return driver.BucketCounts{Bucket: b, Counts: driver.Counts{Calls: calls, Failures: failures}}
	}
	if got := add(e1, 100, bc(99, 3, 1), bc(100, 2, 2)); got != (driver.Counts{Calls: 5, Failures: 3}) {
		t.Errorf("first flush = %+v", got)
	}
	if got := add(e1, 100, bc(100, 1, 0)); got != (driver.Counts{Calls: 6, Failures: 3}) {
		t.Errorf("second flush = %+v", got)
	}
	if got := add(e1, 109); got != (driver.Counts{Calls: 3, Failures: 2}) {
		t.Errorf("bucket 99 left the window: %+v, want bucket 100's", got)
	}
	if got := add(e2, 109, bc(109, 1, 0)); got != (driver.Counts{Calls: 1}) {
		t.Errorf("a new generation = %+v, want its own call only", got)
	}
	add(e1, 109, bc(109, 5, 5)) // what it returns is not used: the Breaker drops it
	if got := add(e2, 109); got != (driver.Counts{Calls: 1}) {
		t.Errorf("after a flush of the earlier generation = %+v, want the current generation's call only", got)
	}
}

// testSkewedFlush checks that a flush from a process whose clock is far
// ahead of the server's does not drop the window's current buckets: the
// server drops buckets by its own time, as a Load returns it.
func testSkewedFlush(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	ws, ok := s.(driver.WindowSharer)
	if !ok {
		t.Fatalf("%T is not a driver.WindowSharer", s)
	}
	ctx := t.Context()
	_, now, err := s.Load(ctx, circuitName)
	if err != nil {
		t.Fatal(err)
	}
	if now.IsZero() {
		now = time.Now()
	}
	const w = time.Minute
	const e = 7<<32 | 1
	bk := driver.Bucket(now, w)
	add := []driver.BucketCounts{{Bucket: bk, Counts: driver.Counts{Calls: 3, Failures: 2}}}
	if _, err := ws.ShareWindow(ctx, circuitName, w, e, bk, add); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ShareWindow(ctx, circuitName, w, e, bk+1000, nil); err != nil { // an hour and a half ahead
		t.Fatal(err)
	}
	n, err := ws.ShareWindow(ctx, circuitName, w, e, bk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (driver.Counts{Calls: 3, Failures: 2}); n != want {
		t.Errorf("after a skewed process's flush the window = %+v, want %+v", n, want)
	}
}
