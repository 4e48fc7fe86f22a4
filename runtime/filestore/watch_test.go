//go:build linux

package filestore

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// TestWatch: the Watch of a loaded record holds while no process changes
// the record, and stops holding when another store on the directory writes
// it, when a write of this store fails at any step, and once the index is due for its
// recheck, so that a Breaker keeping the record loads it again each time.
func TestWatch(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "state")
	s := openDir(t, dir)
	load := func() (*driver.Record, driver.Watch) {
		t.Helper()
		rec, w, err := s.LoadWatched(ctx, "watched")
		if err != nil {
			t.Fatal(err)
		}
		if !w.Holds() {
			t.Fatalf("a Watch just returned does not hold (record %+v)", rec)
		}
		return rec, w
	}
	fail := func(b *circuit.Breaker) error {
		return b.Run(ctx, "watched", p3, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errBoom })
	}

	rec, w := load()
	if rec != nil {
		t.Fatalf("a new circuit's record: %+v, want none", rec)
	}
	if err := fail(circuit.New(openDir(t, dir))); err != errBoom {
		t.Fatal(err)
	}
	if w.Holds() {
		t.Fatal("the Watch of no record holds after another store wrote one")
	}
	rec, w = load()
	if rec == nil || rec.Failures != 1 {
		t.Fatalf("the record after one failure: %+v", rec)
	}

	for _, failed := range []string{"lock", "create", "write", "fsync", "rename"} {
		faultHook = func(op string) error {
			if op == failed {
				return syscall.EIO
			}
			return nil
		}
		err := fail(circuit.New(s))
		faultHook = nil
		if err == errBoom {
			t.Fatalf("a settlement whose %s failed reported none", failed)
		}
		if w.Holds() {
			t.Fatalf("a Watch holds after a %s of its store failed", failed)
		}
		_, w = load()
	}

	if err := fail(circuit.New(s)); err != errBoom {
		t.Fatalf("the next call after the failed write: %v", err)
	}
	_, w = load()
	for deadline := time.Now().Add(3 * recheck); w.Holds(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a Watch still holds %v after it was taken: the index is never rechecked", 3*recheck)
		}
	}
	if err := s.Refresh(ctx); err != nil || !w.Holds() {
		t.Fatalf("after the recheck's Refresh: %v, holds %v; want the Watch of the unchanged record to hold again", err, w.Holds())
	}
}

// TestNoWatchWhileWriteFailed: a load that a failed write of the circuit
// races gets no Watch that holds, and the loads after it fail closed until
// a write succeeds. The failure comes while the load reads the file (a
// hook): the load has passed its first look at the failed writes by then.
func TestNoWatchWhileWriteFailed(t *testing.T) {
	ctx := t.Context()
	s := openDir(t, filepath.Join(t.TempDir(), "state"))
	if _, w, err := s.LoadWatched(ctx, "watched"); err != nil || !w.Holds() {
		t.Fatalf("setup: LoadWatched: %v, holds %v", err, w.Holds())
	}
	faultHook = func(op string) error {
		switch op {
		case "read":
			_ = s.wrote("watched", syscall.EIO) // a write of another goroutine fails now
		case "create":
			return syscall.ENOSPC // and the retry of the next load too
		}
		return nil
	}
	defer func() { faultHook = nil }()
	if _, w, err := s.LoadWatched(ctx, "watched"); err != nil || w.Holds() {
		t.Fatalf("LoadWatched while a write failed: %v, a Watch that holds %v; want none", err, w.Holds())
	}
	if _, _, err := s.LoadWatched(ctx, "watched"); err == nil {
		t.Fatal("LoadWatched after a failed write, its retry failing: no error, want it to fail closed")
	}
	faultHook = nil
	if _, w, err := s.LoadWatched(ctx, "watched"); err != nil || !w.Holds() {
		t.Fatalf("LoadWatched once a write succeeds: %v, holds %v", err, w.Holds())
	}
}
