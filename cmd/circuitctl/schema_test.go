package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

var update = flag.Bool("update", false, "rewrite testdata/state.json from the output of state -json")

// TestStateJSONSchema pins the schema of state -json (documented in doc.go):
// circuits in every state a record can be in, written through a real
// Breaker on a fixed clock, read by the built binary, byte for byte.
// go test ./cmd/circuitctl -run TestStateJSONSchema -update rewrites it; read
// the diff: a change that renames or removes a field breaks its readers.
func TestStateJSONSchema(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, time.January, 2, 3, 4, 5, 0, time.UTC)
	b := circuit.New(s, circuit.WithClock(func() time.Time { return now }))
	ctx := context.Background()
	call := func(name string, o circuit.Outcome, n int) {
		for range n {
			_ = b.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) { return o, nil })
		}
	}
	call("billing-api", circuit.Failure, 2) // closed, 2 failures
	call("payments", circuit.Failure, 3)    // open for 10 minutes
	call("email", circuit.Failure, 3)
	growing := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, MaxCooldown: time.Hour, ProbeLease: time.Minute, CloseAfter: 2}
	for _, name := range []string{"search", "inventory"} {
		_ = b.Run(ctx, name, growing, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, nil })
	}
	now = now.Add(10 * time.Minute)
	_ = b.Run(ctx, "search", growing, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, nil })    // a probe reopens it
	_ = b.Run(ctx, "inventory", growing, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }) // one probe of two succeeds
	if _, err := b.Allow(ctx, "email", policy); err != nil {                                                             // half_open, a probe in flight
		t.Fatal(err)
	}
	if err := b.ForceOpen(ctx, "ledger", time.Hour); err != nil { // forced open
		t.Fatal(err)
	}
	call("audit", circuit.Success, 1)
	if err := os.WriteFile(filepath.Join(dir, circuit.Key("audit")+".json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}

	r := circuitctl(t, nil, "state", "-json", "-store", "file://"+dir, "audit", "billing-api", "email", "inventory", "ledger", "never-called", "payments", "search")
	if r.code != 1 {
		t.Fatalf("state -json: exit %d, want 1 for the corrupt record\n%s", r.code, r.stderr)
	}
	// The errors are text for people, the store's own: only their start is pinned.
	got := strings.ReplaceAll(r.stdout, dir, "$DIR")
	got = regexp.MustCompile(`(corrupt circuit record): [^"]*"`).ReplaceAllString(got, `$1: …"`)
	golden := filepath.Join("testdata", "state.json")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("state -json changed its output (rerun with -update if on purpose):\n%s\nwant:\n%s", got, want)
	}
}
