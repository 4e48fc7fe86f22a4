package filestore_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// TestWallClockStepsMoveNoDeadline opens a circuit, then reads it through
// stores whose wall clock stepped an hour either way: the cooldown neither
// stretches nor shrinks, because deadlines follow the boot clock anchored
// once per boot in the directory.
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

// TestClockFileFromAnotherBootIsReplaced shows a reboot detected: a clock
// file naming another boot is replaced by the next writer's anchor.
func TestClockFileFromAnotherBootIsReplaced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := `{"v":1,"boot_id":"00000000-0000-0000-0000-000000000000","wall_at_boot":"2001-01-01T00:00:00Z"}` + "\n"
	path := filepath.Join(dir, "clock")
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second}
	if err := circuit.New(s).Run(context.Background(), "api", p, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		BootID string    `json:"boot_id"`
		Wall   time.Time `json:"wall_at_boot"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	id, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if want := string(id[:len(id)-1]); got.BootID != want {
		t.Fatalf("boot id %q, want this boot's %q", got.BootID, want)
	}
	if d := time.Since(s.Now()); d > time.Second || d < -time.Second {
		t.Fatalf("store clock is %v away from the wall clock", d)
	}
	if got.Wall.Year() == 2001 {
		t.Fatal("the old boot's anchor was kept")
	}
}
