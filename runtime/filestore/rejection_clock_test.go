package filestore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// TestRejectionUnderAStoreClockOffTheWallClock: the store's time is that of
// an anchor taken while the wall clock read step off the process's (the
// first writer of a boot anchored the directory before an NTP step, or an
// earlier anchor was taken). A rejection the Breaker reuses is timed on the
// process's monotonic clock from the time left by the store's clock: its
// RetryAfter tells the 30s left, and a circuit opened for 3s admits its
// probe once the 3s are over, neither when the wall clock catches up nor
// never (the deadline once overflowed when the store's time was behind).
func TestRejectionUnderAStoreClockOffTheWallClock(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	fail := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, boom }
	never := func(context.Context) (circuit.Outcome, error) {
		t.Error("a call ran on an open circuit")
		return circuit.Success, nil
	}
	for _, step := range []time.Duration{-time.Hour, -10 * time.Minute, -time.Minute, 10 * time.Minute} {
		t.Run(step.String(), func(t *testing.T) {
			t.Parallel()
			s, err := filestore.Open(filepath.Join(t.TempDir(), "state"),
				filestore.WithWallClock(func() time.Time { return time.Now().Add(step) }))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			b := circuit.New(s)
			long := circuit.Policy{FailureThreshold: 1, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}
			if err := b.Run(ctx, "long", long, fail); !errors.Is(err, boom) {
				t.Fatalf("first call: %v", err)
			}
			for i := range 3 {
				var open *circuit.OpenError
				if err := b.Run(ctx, "long", long, never); !errors.As(err, &open) {
					t.Fatalf("call %d: %v, want an *OpenError", i, err)
				}
				if ra := open.RetryAfter(); ra < 28*time.Second || ra > 30*time.Second {
					t.Fatalf("call %d: RetryAfter = %v, want about 30s (Until %v, store now %v)", i, ra, open.Until, s.Now())
				}
			}
			short := circuit.Policy{FailureThreshold: 1, Cooldown: 3 * time.Second, ProbeLease: time.Second}
			if err := b.Run(ctx, "short", short, fail); !errors.Is(err, boom) {
				t.Fatalf("first call: %v", err)
			}
			start := time.Now()
			for time.Since(start) < 6*time.Second {
				ran := false
				err := b.Run(ctx, "short", short, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
				if ran {
					if time.Since(start) < 2900*time.Millisecond {
						t.Fatalf("admitted %v after the opening, before the deadline", time.Since(start))
					}
					return
				}
				if !errors.Is(err, circuit.ErrOpen) {
					t.Fatalf("%v, want an *OpenError", err)
				}
				time.Sleep(5 * time.Millisecond)
			}
			t.Fatalf("no probe %v after the circuit opened for 3s (store now %v)", time.Since(start), s.Now())
		})
	}
}
