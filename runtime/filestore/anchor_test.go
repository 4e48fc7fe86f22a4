//go:build linux

package filestore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TestIndexFromAnotherBootIsReanchored shows a reboot detected: an index
// whose header names another boot gets this boot's anchor from the next
// writer, taken from the wall clock.
func TestIndexFromAnotherBootIsReanchored(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	if err := os.WriteFile(filepath.Join(dir, indexName), newIndex(12345, old), 0o600); err != nil {
		t.Fatal(err)
	}
	s := openDir(t, dir)
	if ran, err := failN(t.Context(), circuit.New(s), "api", 1); ran != 1 || err != errBoom {
		t.Fatal(ran, err)
	}
	m := s.m.Load()
	boot, anchor := m.load(hdrBoot), m.load(hdrAnchor)
	if boot != s.boot() || int64(anchor) == old {
		t.Fatalf("header: boot %x anchor %v; want this boot's (%x), anchored anew", boot, time.Unix(0, int64(anchor)), s.boot())
	}
	if d := time.Since(s.Now()); d > time.Second || d < -time.Second {
		t.Fatalf("store clock is %v away from the wall clock", d)
	}
}

// TestOneProbeAcrossAnchors: two stores whose wall clocks differ by an hour
// race for the probe of a circuit whose cooldown has ended: exactly one
// runs, because both read the same anchor from the index.
func TestOneProbeAcrossAnchors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Minute}
	a := circuit.New(openDir(t, dir))
	b := circuit.New(openDir(t, dir, WithWallClock(func() time.Time { return time.Now().Add(-time.Hour) })))
	if err := a.Run(ctx, "api", p, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errBoom }); err != errBoom {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	release := make(chan struct{})
	results := make(chan bool, 2)
	for _, br := range []*circuit.Breaker{a, b} {
		go func() {
			ran := false
			_ = br.Run(ctx, "api", p, func(context.Context) (circuit.Outcome, error) { ran = true; <-release; return circuit.Success, nil })
			results <- ran
		}()
	}
	first := <-results // the rejected one returns first
	close(release)
	second := <-results
	if first == second {
		t.Fatalf("probes run: %v, %v; want exactly one", first, second)
	}
}
