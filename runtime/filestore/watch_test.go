//go:build linux

package filestore

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
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
			// a write of another goroutine fails now
			_ = s.changed(ctx, "watched", func(counter) error { return syscall.EIO })
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

// TestEarlierWriteKeepsLaterFailure: a write that completed (renamed and
// synced) before another write of the circuit failed, and returns after
// it, must not clear that failure: the process admits no call while every
// write still fails (a lock file the process may no longer open: a
// permission fault).
//
// B's Failure (the circuit's second) is durable and B is about to return;
// A's Failure, the third, would open the circuit, and its write is refused;
// then B's bookkeeping runs. C, a third Breaker of the same process, must
// then be refused (fail closed).
func TestEarlierWriteKeepsLaterFailure(t *testing.T) {
	ctx := t.Context()
	const name = "ledger"
	s := openDir(t, filepath.Join(t.TempDir(), "state"))
	bA, bB, bC := circuit.New(s), circuit.New(s), circuit.New(s)
	if ran, _ := failN(ctx, bA, name, 1); ran != 1 {
		t.Fatal(ran)
	}

	atDirsync, release := make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	stepHook = func(step string) {
		if step == "dirsync" && once.CompareAndSwap(false, true) {
			close(atDirsync)
			<-release
		}
	}
	defer func() { stepHook, faultHook = nil, nil }()
	bDone := make(chan error, 1)
	go func() { bDone <- bB.Run(ctx, name, p3, failOp) }()
	<-atDirsync // B's write is renamed and synced: failures 2

	// From now on no write of the circuit can succeed: its lock file
	// cannot be opened (chmod 000 by a permission fault; EACCES).
	faultHook = func(op string) error {
		if op == "lock" {
			return syscall.EACCES
		}
		return nil
	}
	err := bA.Run(ctx, name, p3, failOp)
	if se, ok := errors.AsType[*circuit.StateError](err); !ok || !se.Ran {
		t.Fatalf("A's third failure with its write refused: %v, want a StateError after the call ran", err)
	}
	if !s.failing(name) {
		t.Fatal("setup: the store does not mark the circuit failed after A's write failed")
	}
	close(release)
	if err := <-bDone; err != errBoom {
		t.Fatalf("B: %v", err)
	}

	admitted := 0
	for range 5 {
		ran := false
		_ = bC.Run(ctx, name, p3, succeedOp(&ran))
		if ran {
			admitted++
		}
	}
	if admitted > 0 {
		t.Fatalf("%d of 5 calls admitted by another Breaker of the process after the circuit's third failure "+
			"could not be written and while every write of it still fails (store marks it failed: %v)", admitted, s.failing(name))
	}
}

// TestBreakersOnOneDirectoryRace: many goroutines of two Breakers, two
// Stores of one directory, three policies on one circuit (the first
// handle's, Breaker.Run by name with another, a Circuit of a third), with
// failures, probes, snapshots, clears and holds, under -race: no data race,
// and no call hangs.
func TestBreakersOnOneDirectoryRace(t *testing.T) {
	ctx := t.Context()
	dir := shmDir(t)
	s1, s2 := openDir(t, dir), openDir(t, dir)
	bs := []*circuit.Breaker{circuit.New(s1), circuit.New(s1), circuit.New(s2)}
	pols := []circuit.Policy{
		{FailureThreshold: 2, Cooldown: time.Second, ProbeLease: time.Second},
		{FailureThreshold: 3, Cooldown: time.Second, ProbeLease: time.Second, CloseAfter: 2},
		{FailureRate: 0.5, MinCalls: 4, WindowCalls: 8, Cooldown: time.Second, ProbeLease: time.Second},
	}
	names := []string{"a", "b", "c"}
	deadline := time.Now().Add(4 * time.Second)
	done := make(chan struct{})
	var wg = make(chan struct{}, 32)
	for g := range 24 {
		wg <- struct{}{}
		go func() {
			defer func() { <-wg }()
			r := uint64(g)*2654435761 + 1
			next := func(n int) int { r ^= r << 13; r ^= r >> 7; r ^= r << 17; return int(r % uint64(n)) }
			for time.Now().Before(deadline) {
				b, name, p := bs[next(len(bs))], names[next(len(names))], pols[next(len(pols))]
				o := []circuit.Outcome{circuit.Success, circuit.Success, circuit.Failure, circuit.Ignored}[next(4)]
				op := func(context.Context) (circuit.Outcome, error) { return o, nil }
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				switch next(20) {
				case 0:
					_, _ = b.Snapshot(cctx, name)
				case 1:
					if next(10) == 0 {
						_ = b.Clear(cctx, name)
					}
				case 2:
					if next(20) == 0 {
						_ = b.ForceOpen(cctx, name, time.Second)
					}
				case 3, 4, 5:
					_ = b.Circuit(name, p).Run(cctx, op)
				case 6, 7:
					if tk, err := b.Allow(cctx, name, p); err == nil {
						_ = tk.Done(o)
					}
				default:
					_ = b.Run(cctx, name, pols[0], op)
				}
				cancel()
			}
		}()
	}
	go func() {
		for range 32 {
			wg <- struct{}{}
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a call hung")
	}
}
