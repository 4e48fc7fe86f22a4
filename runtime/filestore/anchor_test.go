//go:build linux

package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"syscall"
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
	if boot != sboot(t, s) || int64(anchor) == old {
		t.Fatalf("header: boot %x anchor %v; want this boot's (%x), anchored anew", boot, time.Unix(0, int64(anchor)), sboot(t, s))
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

// sboot returns s's boot hash, failing the test when it cannot be read.
func sboot(t *testing.T, s *Store) uint64 {
	t.Helper()
	b, err := s.boot()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAnchorChangedInPlace: the clock anchor in the index header changed
// in place, an hour later (pwrite; outside the model). A running process
// sees it at its recheck and takes it, as a new process does: their clocks
// agree again, so a circuit one opens is open to the other, not a probe
// early at each opening.
func TestAnchorChangedInPlace(t *testing.T) {
	ctx := t.Context()
	dir := shmDir(t)
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: time.Minute}
	old := circuit.New(openDir(t, dir))
	ran := false
	if err := old.Run(ctx, "ledger", p, succeedOp(&ran)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, indexName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var word [8]byte
	if _, err := f.ReadAt(word[:], hdrAnchor); err != nil {
		t.Fatal(err)
	}
	binary.NativeEndian.PutUint64(word[:], binary.NativeEndian.Uint64(word[:])+uint64(time.Hour))
	if _, err := f.WriteAt(word[:], hdrAnchor); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	newer := circuit.New(openDir(t, dir))
	time.Sleep(recheck + 300*time.Millisecond) // the old process's recheck comes and goes
	if err := old.Run(ctx, "ledger", p, failOp); err != errBoom {
		t.Fatalf("the old process's failure: %v", err)
	}
	ran = false
	err = newer.Run(ctx, "ledger", p, succeedOp(&ran))
	var open *circuit.OpenError
	if ran || !errors.As(err, &open) || open.RetryAfter() < 50*time.Second {
		t.Fatalf("the new process's call after the old one opened the circuit for %v: %v (ran %v), want it rejected for about %v",
			p.Cooldown, err, ran, p.Cooldown)
	}
}

// TestBootIDReadFailsClosed: a read of the boot id that fails (out of
// descriptors, say) fails the call that needs it closed, and is not kept:
// the next call reads it, anchors by it, and a wall clock stepped since the
// boot's anchor moves no deadline.
func TestBootIDReadFailsClosed(t *testing.T) {
	ctx := t.Context()
	dir := shmDir(t)
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: time.Minute}
	first := circuit.New(openDir(t, dir))
	if err := first.Run(ctx, "ledger", p, failOp); err != errBoom {
		t.Fatal(err)
	}
	ahead := openDir(t, dir, WithWallClock(func() time.Time { return time.Now().Add(time.Hour) }))
	b := circuit.New(ahead)
	faultHook = func(op string) error {
		if op == "boot" {
			return syscall.EMFILE
		}
		return nil
	}
	ran := false
	err := b.Run(ctx, "ledger", p, succeedOp(&ran))
	faultHook = nil
	if _, ok := errors.AsType[*circuit.StateError](err); !ok || ran {
		t.Fatalf("a call whose store could not read the boot id: %v (ran %v), want a StateError before it ran", err, ran)
	}
	ran = false
	err = b.Run(ctx, "ledger", p, succeedOp(&ran))
	var open *circuit.OpenError
	if ran || !errors.As(err, &open) || open.RetryAfter() < 50*time.Second {
		t.Fatalf("the next call, the boot id read, its wall clock an hour ahead: %v (ran %v), want rejected for about %v", err, ran, p.Cooldown)
	}
	if h := ahead.m.Load().load(hdrBoot); h != sboot(t, ahead) {
		t.Fatalf("index header's boot %x, want this boot's", h)
	}
}
