package sqlstore_test

import (
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// TestFlushSkipsOnlyOldBuckets checks, on every backend, that a flush
// whose buckets come in no particular order (a process sends them by
// slot) drops those that left the window and counts all the others.
func TestFlushSkipsOnlyOldBuckets(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s, _ := b.newStore(t)
			const e = 7<<32 | 1
			add := []driver.BucketCounts{
				{Bucket: 90, Counts: driver.Counts{Calls: 5, Failures: 5}}, // left the window of 100
				{Bucket: 99, Counts: driver.Counts{Calls: 3, Failures: 1}},
				{Bucket: 100, Counts: driver.Counts{Calls: 2}},
			}
			n, err := s.ShareWindow(t.Context(), "billing-api", time.Minute, e, 100, add)
			if err != nil {
				t.Fatal(err)
			}
			if want := (driver.Counts{Calls: 5, Failures: 1}); n != want {
				t.Errorf("ShareWindow = %+v, want %+v", n, want)
			}
		})
	}
}
