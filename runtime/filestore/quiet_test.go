//go:build linux

package filestore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// TestQuiet: a circuit's quiet admission (circuit.Quiet, the one shortcut
// generated methods inline) admits a call only while the store vouches for
// a healthy kept record under a plain policy, and rejects one only while it
// vouches for a kept standing rejection; a call it admitted settles
// nothing for a Success while no process changed the record, and anything
// else is settled as Run would.
func TestQuiet(t *testing.T) {
	ctx := t.Context()
	ok := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
	boom := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errBoom }
	rate := circuit.Policy{FailureRate: 0.5, MinCalls: 10, Window: time.Minute, Cooldown: time.Minute, ProbeLease: time.Second}
	for _, tc := range []struct {
		name  string
		p     circuit.Policy
		setup func(t *testing.T, c *circuit.Circuit, other *circuit.Breaker)
		quiet bool
		// rejected: Quiet returns the kept standing rejection.
		rejected bool
	}{
		{"nothing kept yet", p3, func(*testing.T, *circuit.Circuit, *circuit.Breaker) {}, false, false},
		{"a healthy kept record", p3, func(t *testing.T, c *circuit.Circuit, _ *circuit.Breaker) { run(t, c, ok, nil) }, true, false},
		{"a failure counted", p3, func(t *testing.T, c *circuit.Circuit, _ *circuit.Breaker) { run(t, c, boom, errBoom) }, false, false},
		{"another process wrote", p3, func(t *testing.T, c *circuit.Circuit, other *circuit.Breaker) {
			run(t, c, ok, nil)
			if err := other.Run(ctx, c.Name(), p3, boom); err != errBoom {
				t.Fatal(err)
			}
		}, false, false},
		{"a rate rule's healthy kept record", rate, func(t *testing.T, c *circuit.Circuit, _ *circuit.Breaker) { run(t, c, ok, nil) }, true, false},
		{"open", p3, func(t *testing.T, c *circuit.Circuit, other *circuit.Breaker) {
			if err := other.ForceOpen(ctx, c.Name(), time.Hour); err != nil {
				t.Fatal(err)
			}
			if err := c.Run(ctx, ok); !errors.Is(err, circuit.ErrOpen) {
				t.Fatalf("Run: %v, want the open circuit's rejection", err)
			}
		}, false, true},
		{"open, then closed by another process", p3, func(t *testing.T, c *circuit.Circuit, other *circuit.Breaker) {
			if err := other.ForceOpen(ctx, c.Name(), time.Hour); err != nil {
				t.Fatal(err)
			}
			if err := c.Run(ctx, ok); !errors.Is(err, circuit.ErrOpen) {
				t.Fatalf("Run: %v, want the open circuit's rejection", err)
			}
			if err := other.Clear(ctx, c.Name()); err != nil {
				t.Fatal(err)
			}
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			b := circuit.New(openDir(t, dir))
			c := b.Circuit("quiet", tc.p)
			tc.setup(t, c, circuit.New(openDir(t, dir)))
			q := c.Quiet()
			if got := q.Admitted(); got != tc.quiet {
				t.Fatalf("Quiet().Admitted() = %v, want %v", got, tc.quiet)
			}
			err := q.Rejected()
			var open *circuit.OpenError
			if got := errors.As(err, &open); got != tc.rejected || err != nil && !got {
				t.Fatalf("Quiet().Rejected() = %v, want a rejection: %v", err, tc.rejected)
			}
			if tc.rejected && (open.Name != "quiet" || open.RetryAfter() <= 0) {
				t.Fatalf("Quiet().Rejected() = %+v, want the circuit's, with a RetryAfter", open)
			}
		})
	}

	t.Run("a rate rule counts a quiet Success", func(t *testing.T) {
		s := openDir(t, filepath.Join(t.TempDir(), "state"))
		c := circuit.New(s).Circuit("quiet", rate)
		run(t, c, ok, nil)
		for range 3 {
			q := c.Quiet()
			if !q.Admitted() || q.Settled(circuit.Success) {
				t.Fatalf("admitted %v, settled %v: want admitted, and a Success left to count", q.Admitted(), q.Settled(circuit.Success))
			}
			if err := q.Settle(ctx, circuit.Success, nil); err != nil {
				t.Fatal(err)
			}
		}
		cells, err := s.WindowCells("quiet", rate.Window)
		if err != nil {
			t.Fatal(err)
		}
		if got := cells.Counts(driver.WindowEpoch(nil), driver.Bucket(s.Now(), rate.Window)); got.Calls != 4 || got.Failures != 0 {
			t.Fatalf("window %+v, want the 4 successes", got)
		}
	})

	t.Run("settled", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		b := circuit.New(openDir(t, dir))
		other := circuit.New(openDir(t, dir))
		c := b.Circuit("quiet", p3)
		run(t, c, ok, nil)
		q := c.Quiet()
		if !q.Admitted() || !q.Settled(circuit.Success) {
			t.Fatalf("a Success on an unchanged healthy record: admitted %v, settled %v; want both", q.Admitted(), q.Settled(circuit.Success))
		}
		if q.Settled(circuit.Failure) || q.Settled(circuit.Ignored) {
			t.Fatal("a Failure or an Ignored call reads as settled: only a Success has nothing to settle")
		}
		if err := q.Settle(ctx, circuit.Failure, errBoom); err != errBoom {
			t.Fatalf("Settle of a Failure: %v, want the operation's error", err)
		}
		if s, err := b.Snapshot(ctx, "quiet"); err != nil || s.Failures != 1 {
			t.Fatalf("after a quiet call's Failure: %+v, %v; want 1 failure counted", s, err)
		}
		if err := other.Run(ctx, "quiet", p3, ok); err != nil { // resets the count: the record changes
			t.Fatal(err)
		}
		run(t, c, ok, nil)
		q = c.Quiet()
		if err := other.Run(ctx, "quiet", p3, boom); err != errBoom {
			t.Fatal(err)
		}
		if q.Settled(circuit.Success) {
			t.Fatal("a Success after another process changed the record reads as settled")
		}
		if err := q.Settle(ctx, circuit.Success, nil); err != nil {
			t.Fatal(err)
		}
		if s, err := b.Snapshot(ctx, "quiet"); err != nil || s.Failures != 0 {
			t.Fatalf("a Success settled after another process's Failure: %+v, %v; want the count reset", s, err)
		}
	})
}

// run runs op through c and wants its error.
func run(t *testing.T, c *circuit.Circuit, op func(context.Context) (circuit.Outcome, error), want error) {
	t.Helper()
	if err := c.Run(t.Context(), op); err != want {
		t.Fatalf("Run: %v, want %v", err, want)
	}
}
