package circuit_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// lastFour opens a circuit when 3 of its last 4 calls failed.
var lastFour = func() circuit.Policy { p := calls(4, 4); p.FailureRate = 0.75; return p }()

// TestCountWindow: the rate rule over WindowCalls looks at the last calls,
// however old, and at nothing before them; with a store that keeps no
// windows, each Breaker counts its own calls. Counting reads no clock.
func TestCountWindow(t *testing.T) {
	var reads atomic.Int32
	clock := newClock()
	s := newMemStore(t, clock)
	now := func() time.Time { reads.Add(1); return clock.Now() }
	b := circuit.New(s, circuit.WithClock(now))
	ctx := t.Context()
	boom := errors.New("boom")
	if err := b.Run(ctx, testName, lastFour, succeed); err != nil { // creates the record
		t.Fatal(err)
	}
	reads.Store(0)
	_, writes, _ := s.counts()
	// Five successes spread over a day, then two failures: 2 of the last 4.
	for range 5 {
		clock.Advance(5 * time.Hour)
		if err := b.Run(ctx, testName, lastFour, succeed); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := b.Run(ctx, testName, lastFour, failing(boom)); err != boom {
			t.Fatal(err)
		}
	}
	if r := s.rec(testName); r.State != circuit.StateClosed {
		t.Fatalf("open after 2 failures in the last 4 calls: %s", fmtRecord(r))
	}
	if _, after, _ := s.counts(); after != writes || reads.Load() != 0 {
		t.Errorf("counting wrote %d records and read the clock %d times, want neither", after-writes, reads.Load())
	}

	t.Run("another Breaker on a store that keeps no windows counts its own calls", func(t *testing.T) {
		other := circuit.New(s, circuit.WithClock(clock.Now))
		if err := other.Run(ctx, testName, lastFour, failing(boom)); err != boom {
			t.Fatal(err)
		}
		if r := s.rec(testName); r.State != circuit.StateClosed {
			t.Fatalf("a failure of another Breaker counted in this one's window: %s", fmtRecord(r))
		}
	})
	if err := b.Run(ctx, testName, lastFour, failing(boom)); err != boom {
		t.Fatal(err)
	}
	r := s.rec(testName)
	if r.State != circuit.StateOpen || !r.OpenUntil.Equal(clock.Now().Add(lastFour.Cooldown)) {
		t.Fatalf("3 failures in the last 4 calls (3 in 9 since the record was made): %s, want open", fmtRecord(r))
	}

	t.Run("closing starts a fresh window", func(t *testing.T) {
		clock.Set(r.OpenUntil)
		if err := b.Run(ctx, testName, lastFour, succeed); err != nil { // the probe
			t.Fatal(err)
		}
		for range 3 {
			if err := b.Run(ctx, testName, lastFour, failing(boom)); err != boom {
				t.Fatal(err)
			}
		}
		if r := s.rec(testName); r.State != circuit.StateClosed {
			t.Fatalf("3 failures in a fresh window below MinCalls: %s, want closed", fmtRecord(r))
		}
	})
}
