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

// TestWallClockStepsMoveNoDeadline opens a circuit, then reads it through
// stores whose wall clock stepped an hour either way: the cooldown neither
// stretches nor shrinks, because deadlines follow the boot clock anchored
// once per boot in the directory's change index.
func TestWallClockStepsMoveNoDeadline(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := context.Background()
	p := circuit.Policy{FailureThreshold: 1, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}
	first, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(first)
	boom := errors.New("boom")
	if err := b.Run(ctx, "api", p, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, boom }); !errors.Is(err, boom) {
		t.Fatalf("first call: %v", err)
	}
	for _, step := range []time.Duration{time.Hour, -time.Hour} {
		t.Run(step.String(), func(t *testing.T) {
			stepped, err := filestore.Open(dir, filestore.WithWallClock(func() time.Time { return time.Now().Add(step) }))
			if err != nil {
				t.Fatal(err)
			}
			if d := stepped.Now().Sub(first.Now()); d > time.Second || d < -time.Second {
				t.Fatalf("stepped store's clock differs by %v", d)
			}
			ran := false
			err = circuit.New(stepped).Run(ctx, "api", p, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
			var open *circuit.OpenError
			if !errors.As(err, &open) || ran {
				t.Fatalf("got %v (ran %v), want an OpenError", err, ran)
			}
			if ra := open.RetryAfter(); ra < 28*time.Second || ra > 30*time.Second {
				t.Fatalf("RetryAfter = %v, want about 30s", ra)
			}
		})
	}
}
