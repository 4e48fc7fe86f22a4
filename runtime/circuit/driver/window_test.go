package driver_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func TestWindowCells(t *testing.T) {
	const e1, e2 = 7<<32 | 1, 7<<32 | 2 // generations 1 and 2 of one incarnation
	t.Run("counts the last ten buckets of its epoch", func(t *testing.T) {
		var c driver.WindowCells
		for b := int64(100); b < 120; b++ {
			c.Add(e1, b, b%2 == 0)
		}
		if got, want := c.Counts(e1, 119), (driver.Counts{Calls: 10, Failures: 5}); got != want {
			t.Errorf("Counts(119) = %+v, want %+v", got, want)
		}
		if got, want := c.Counts(e1, 125), (driver.Counts{Calls: 4, Failures: 2}); got != want {
			t.Errorf("Counts(125) = %+v, want %+v (buckets 116..119)", got, want)
		}
		if got := c.Counts(e1, 200); got != (driver.Counts{}) {
			t.Errorf("Counts(200) = %+v, want empty", got)
		}
		if got := c.Counts(e2, 119); got != (driver.Counts{}) {
			t.Errorf("Counts of another epoch = %+v, want empty", got)
		}
	})
	t.Run("a new epoch empties the window; the old one no longer counts", func(t *testing.T) {
		var c driver.WindowCells
		c.Add(e1, 5, true)
		c.Add(e1, 5, true)
		c.Add(e2, 6, false)
		c.Add(e1, 6, true) // a straggler of the old epoch
		if got, want := c.Counts(e2, 6), (driver.Counts{Calls: 1}); got != want {
			t.Errorf("Counts = %+v, want %+v", got, want)
		}
	})
	t.Run("a call for a bucket already replaced is dropped", func(t *testing.T) {
		// A process stopped between reading the clock and counting comes
		// back with a bucket windows behind the one its cell holds.
		for _, late := range []int64{10, 20, 1000, 1 << 20} {
			var c driver.WindowCells
			now := int64(3<<32) + 20
			c.Add(e1, now, true)
			c.Add(e1, now-late, false) // same cell, late
			if got, want := c.Counts(e1, now), (driver.Counts{Calls: 1, Failures: 1}); got != want {
				t.Errorf("%d buckets late: Counts = %+v, want %+v", late, got, want)
			}
		}
	})
	t.Run("concurrent adds are all counted", func(t *testing.T) {
		// The epoch is entered first: a call that changes the epoch may
		// lose the counts made while it empties the cells (Add's doc).
		var c driver.WindowCells
		c.Add(e1, 7, false)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 1000 {
					c.Add(e1, 7, (g+i)%4 == 0)
				}
			})
		}
		wg.Wait()
		if got, want := c.Counts(e1, 7), (driver.Counts{Calls: 8001, Failures: 2000}); got != want {
			t.Errorf("Counts = %+v, want %+v", got, want)
		}
	})
}

func TestBucket(t *testing.T) {
	w := 10 * time.Second // buckets of one second
	tests := []struct {
		t    time.Time
		want int64
	}{
		{time.Unix(0, 0), 0},
		{time.Unix(0, 999_999_999), 0},
		{time.Unix(1, 0), 1},
		{time.Unix(100, 5), 100},
		{time.Unix(-1, 0), -1},
		{time.Unix(0, -1), -1},
	}
	for _, tt := range tests {
		if got := driver.Bucket(tt.t, w); got != tt.want {
			t.Errorf("Bucket(%v) = %d, want %d", tt.t.UnixNano(), got, tt.want)
		}
	}
}

func TestCallCells(t *testing.T) {
	const e1, e2 = 7<<32 | 1, 7<<32 | 2 // generations 1 and 2 of one incarnation
	// add counts outcomes in order: 'f' a failure, 's' a success.
	add := func(c *driver.CallCells, e uint64, n int, outcomes string) {
		for _, o := range outcomes {
			c.Add(e, n, o == 'f')
		}
	}
	tests := []struct {
		name     string
		n        int
		outcomes string
		want     driver.Counts
	}{
		{"empty", 4, "", driver.Counts{}},
		{"fewer calls than n: all of them", 4, "fsf", driver.Counts{Calls: 3, Failures: 2}},
		{"exactly n", 4, "ffss", driver.Counts{Calls: 4, Failures: 2}},
		{"the failures of older calls leave", 4, "ffffssss", driver.Counts{Calls: 4}},
		{"only the last n count", 4, "ssssssfff", driver.Counts{Calls: 4, Failures: 3}},
		{"a failure replaces a failure", 2, "ffff", driver.Counts{Calls: 2, Failures: 2}},
		{"n of one: the last call", 1, "fffs", driver.Counts{Calls: 1}},
		{"n across ring words", 100, strings.Repeat("f", 130) + strings.Repeat("s", 40), driver.Counts{Calls: 100, Failures: 60}},
		{"the longest window", driver.MaxWindowCalls, strings.Repeat("fs", driver.MaxWindowCalls), driver.Counts{Calls: driver.MaxWindowCalls, Failures: driver.MaxWindowCalls / 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c driver.CallCells
			add(&c, e1, tt.n, tt.outcomes)
			if got := c.Counts(e1, tt.n); got != tt.want {
				t.Errorf("Counts after %d calls = %+v, want %+v", len(tt.outcomes), got, tt.want)
			}
			if got := c.Counts(e2, tt.n); got != (driver.Counts{}) {
				t.Errorf("Counts of another epoch = %+v, want empty", got)
			}
		})
	}
	t.Run("a new epoch empties the window; the old one no longer counts", func(t *testing.T) {
		var c driver.CallCells
		add(&c, e1, 4, "ffff")
		add(&c, e2, 4, "s")
		add(&c, e1, 4, "ff") // stragglers of the old epoch
		if got, want := c.Counts(e2, 4), (driver.Counts{Calls: 1}); got != want {
			t.Errorf("Counts = %+v, want %+v", got, want)
		}
	})
	t.Run("concurrent adds are all counted", func(t *testing.T) {
		var c driver.CallCells
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 1000 {
					c.Add(e1, 4000, true)
				}
			})
		}
		wg.Wait()
		if got, want := c.Counts(e1, 4000), (driver.Counts{Calls: 4000, Failures: 4000}); got != want {
			t.Errorf("Counts = %+v, want %+v", got, want)
		}
	})
}
