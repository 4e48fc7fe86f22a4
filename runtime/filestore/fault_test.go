//go:build linux

package filestore

// Fault injection, SQLite's I/O-error method: every filesystem operation a
// Breaker call makes is failed in turn, N = 1, 2, … until the call completes
// without reaching the Nth, with each of ENOSPC, EIO, EROFS and EACCES. The
// seam is faultHook (fault.go); TestRealFault* cause the same errors with a
// full tmpfs and a read-only bind mount where the machine allows mounting.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

const faultCircuit = "ledger-api"

var faultPolicy = circuit.Policy{FailureThreshold: 2, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

var errLedgerDown = errors.New("ledger down")

// owedRetry bounds how long a Breaker waits to write again a settlement
// the store refused (runtime/circuit's owedRetry, 250ms).
const owedRetry = 300 * time.Millisecond

var faultBase = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

// faultClock is a settable clock for circuit.WithClock.
type faultClock struct{ now time.Time }

func (c *faultClock) Now() time.Time { return c.now }

// faultCall is one faulted Breaker call. ran is set when the operation
// starts, so that the fault hook knows whether it hit the admission or the
// settlement.
type faultCall struct {
	name string
	// setup brings the circuit to the state the call starts from, without
	// faults.
	setup func(t *testing.T, b *circuit.Breaker, clk *faultClock)
	// call makes the call; opErr is the operation's own error.
	call  func(ctx context.Context, b *circuit.Breaker, ran *bool) error
	opErr error
	// clear marks the Clear call: no operation runs.
	clear bool
}

func faultRun(o circuit.Outcome, opErr error) func(ctx context.Context, b *circuit.Breaker, ran *bool) error {
	return func(ctx context.Context, b *circuit.Breaker, ran *bool) error {
		return b.Run(ctx, faultCircuit, faultPolicy, func(context.Context) (circuit.Outcome, error) {
			*ran = true
			return o, opErr
		})
	}
}

// mustRun runs a call that must settle without a StateError.
func mustRun(t *testing.T, b *circuit.Breaker, o circuit.Outcome, opErr error) {
	t.Helper()
	err := b.Run(t.Context(), faultCircuit, faultPolicy, func(context.Context) (circuit.Outcome, error) { return o, opErr })
	if err != opErr {
		t.Fatalf("setup: Run(%v) = %v, want %v", o, err, opErr)
	}
}

// mustClear gives faultCircuit a record, closed with no failures: a
// healthy call writes none.
func mustClear(t *testing.T, b *circuit.Breaker) {
	t.Helper()
	if err := b.Clear(t.Context(), faultCircuit); err != nil {
		t.Fatalf("setup: Clear = %v", err)
	}
}

var faultCalls = []faultCall{
	{
		// The first call ever: it creates the directory and the change
		// index before the operation runs, and no record (a success
		// changes nothing).
		name:  "FirstCall",
		setup: func(*testing.T, *circuit.Breaker, *faultClock) {},
		call:  faultRun(circuit.Success, nil),
	},
	{
		// A closed record: the operation runs, its failure is counted.
		name:  "SettleCountsFailure",
		setup: func(t *testing.T, b *circuit.Breaker, _ *faultClock) { mustRun(t, b, circuit.Success, nil) },
		call:  faultRun(circuit.Failure, errLedgerDown),
		opErr: errLedgerDown,
	},
	{
		// One failure to go: the settlement opens the circuit.
		name:  "SettleOpens",
		setup: func(t *testing.T, b *circuit.Breaker, _ *faultClock) { mustRun(t, b, circuit.Failure, errLedgerDown) },
		call:  faultRun(circuit.Failure, errLedgerDown),
		opErr: errLedgerDown,
	},
	{
		// An open circuit past its cooldown: the call claims the probe
		// (a write before the operation), and its success closes the
		// circuit (a write after).
		name: "ProbeClaimAndClose",
		setup: func(t *testing.T, b *circuit.Breaker, clk *faultClock) {
			for range faultPolicy.FailureThreshold {
				mustRun(t, b, circuit.Failure, errLedgerDown)
			}
			clk.now = clk.now.Add(faultPolicy.Cooldown)
		},
		call: faultRun(circuit.Success, nil),
	},
	{
		// The probe fails: the claim, then a reopening.
		name: "ProbeClaimAndReopen",
		setup: func(t *testing.T, b *circuit.Breaker, clk *faultClock) {
			for range faultPolicy.FailureThreshold {
				mustRun(t, b, circuit.Failure, errLedgerDown)
			}
			clk.now = clk.now.Add(faultPolicy.Cooldown)
		},
		call:  faultRun(circuit.Failure, errLedgerDown),
		opErr: errLedgerDown,
	},
	{
		name:  "Clear",
		setup: func(t *testing.T, b *circuit.Breaker, _ *faultClock) { mustRun(t, b, circuit.Failure, errLedgerDown) },
		call: func(ctx context.Context, b *circuit.Breaker, _ *bool) error {
			return b.Clear(ctx, faultCircuit)
		},
		clear: true,
	},
}

var faultErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EIO, syscall.EROFS, syscall.EACCES}

// faultStats counts what TestFaultAtEveryStep covered, for the report.
type faultStats struct{ cases, faults int }

func TestFaultAtEveryStep(t *testing.T) {
	var total faultStats
	for _, fc := range faultCalls {
		t.Run(fc.name, func(t *testing.T) {
			template, at := faultTemplate(t, fc)
			var ops []string // the call's operations, from the fault-free run
			for _, errno := range faultErrnos {
				t.Run(errnoName(errno), func(t *testing.T) {
					for n := 1; ; n++ {
						if n > 200 {
							t.Fatal("the call still reaches a fault after 200 operations")
						}
						hit, seen := faultOnce(t, fc, template, at, n, errno)
						total.cases++
						if hit == "" {
							if ops != nil && strings.Join(ops, ",") != strings.Join(seen, ",") {
								t.Fatalf("fault-free runs made different operations:\n%v\n%v", ops, seen)
							}
							ops = seen
							break
						}
						total.faults++
					}
				})
			}
			t.Logf("%s: %d operations: %s", fc.name, len(ops), strings.Join(ops, " "))
		})
	}
	t.Logf("%d faulted calls, %d cases in all", total.faults, total.cases)
}

// faultTemplate builds the state fc starts from in a directory of its own,
// and returns the directory (empty path: no directory) and the clock.
func faultTemplate(t *testing.T, fc faultCall) (string, time.Time) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "template")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	clk := &faultClock{now: faultBase}
	fc.setup(t, circuit.New(s, circuit.WithClock(clk.Now)), clk)
	if _, err := os.Lstat(dir); err != nil {
		return "", clk.now
	}
	return dir, clk.now
}

// copyStateDir copies a state directory's files (the record, its lock, the
// change index) to a new directory dst with the store's modes.
func copyStateDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.Mkdir(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		data, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, de.Name()), data, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// faultOnce makes fc's call on a copy of template with the nth filesystem
// operation failing with errno, checks the aftermath, and returns the
// operation that failed ("" when the call made fewer than n) and the
// operations the call made.
func faultOnce(t *testing.T, fc faultCall, template string, at time.Time, n int, errno syscall.Errno) (hit string, ops []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if template != "" {
		copyStateDir(t, template, dir)
	}
	record := filepath.Join(dir, circuit.Key(faultCircuit)+".json")
	// A fresh store, as in another process: its first read is a real one.
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	clk := &faultClock{now: at}
	b := circuit.New(s, circuit.WithClock(clk.Now))
	var ran, ranAtFault bool
	var before []byte
	var beforeErr error
	faultHook = func(op string) error {
		ops = append(ops, op)
		if len(ops) != n {
			return nil
		}
		hit, ranAtFault = op, ran
		before, beforeErr = os.ReadFile(record) // what the failing operation found
		return errno
	}
	err = fc.call(t.Context(), b, &ran)
	faultHook = nil
	where := fmt.Sprintf("%v at operation %d (%s)", errno, n, hit)

	if hit == "" {
		if err != fc.opErr {
			t.Fatalf("without a fault: %v, want %v", err, fc.opErr)
		}
		return "", ops
	}

	// The call reports a StateError, with the injected error reachable.
	var se *circuit.StateError
	if !errors.As(err, &se) {
		t.Fatalf("%s: err = %v (%T), want a *circuit.StateError", where, err, err)
	}
	if !errors.Is(err, errno) {
		t.Errorf("%s: %v does not wrap %v", where, err, errno)
	}
	switch {
	case fc.clear:
	case !ranAtFault:
		// The fault hit the admission: the operation was not invoked.
		if ran || se.Ran {
			t.Errorf("%s: the operation ran (StateError.Ran = %v) although its admission failed", where, se.Ran)
		}
	default:
		// The fault hit the settlement: the StateError takes precedence
		// and carries the operation's own error.
		if !se.Ran || se.CallErr != fc.opErr || (fc.opErr != nil && !errors.Is(err, fc.opErr)) {
			t.Errorf("%s: settlement failure %v: Ran = %v, CallErr = %v; want true, %v", where, err, se.Ran, se.CallErr, fc.opErr)
		}
	}

	// The record is what the failed operation found, whole.
	after, afterErr := os.ReadFile(record)
	switch {
	case errors.Is(beforeErr, fs.ErrNotExist) != errors.Is(afterErr, fs.ErrNotExist):
		t.Errorf("%s: record before: %v, after: %v", where, beforeErr, afterErr)
	case afterErr == nil && !bytes.Equal(before, after):
		t.Errorf("%s: the record changed:\n%s%s", where, before, after)
	case afterErr == nil:
		if _, err := decode(after); err != nil {
			t.Errorf("%s: the record does not decode: %v", where, err)
		}
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(temps) != 0 {
		t.Errorf("%s: temporary files left: %q", where, temps)
	}
	if t.Failed() {
		t.FailNow()
	}

	// Once the fault clears, the same Breaker works, past any lease or
	// cooldown the failed call may have recorded.
	ctx := t.Context()
	if fc.clear {
		if err := b.Clear(ctx, faultCircuit); err != nil {
			t.Fatalf("%s: Clear once the fault cleared: %v", where, err)
		}
	}
	clk.now = clk.now.Add(faultPolicy.Cooldown + faultPolicy.ProbeLease + time.Second)
	ran = false
	err = faultRun(circuit.Success, nil)(ctx, b, &ran)
	if fc.opErr != nil && errors.Is(err, circuit.ErrOpen) && !ran {
		// The refused failure, owed, opened the circuit when it was
		// written: its cooldown starts then (runtime/circuit/owed.go).
		clk.now = clk.now.Add(faultPolicy.Cooldown + time.Second)
		err = faultRun(circuit.Success, nil)(ctx, b, &ran)
	}
	if err != nil || !ran {
		t.Fatalf("%s: the next call once the fault cleared: %v, ran = %v; want nil, true", where, err, ran)
	}
	// Another process sees what this one does.
	fresh, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err1 := circuit.New(fresh).Snapshot(ctx, faultCircuit)
	want, err2 := b.Snapshot(ctx, faultCircuit)
	if err1 != nil || err2 != nil || got != want || got.State != circuit.StateClosed {
		t.Fatalf("%s: after recovery a fresh store sees %+v (%v), this one %+v (%v); want the same closed record", where, got, err1, want, err2)
	}
	return hit, ops
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.ENOSPC:
		return "ENOSPC"
	case syscall.EIO:
		return "EIO"
	case syscall.EROFS:
		return "EROFS"
	case syscall.EACCES:
		return "EACCES"
	}
	return fmt.Sprintf("errno%d", int(e))
}

// TestFaultHookOffFastPath checks that Load's fast path (a closed circuit,
// unchanged) consults no fault: it makes no system call at all.
func TestFaultHookOffFastPath(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(s)
	mustRun(t, b, circuit.Success, nil)
	mustRun(t, b, circuit.Success, nil) // the record is known now
	var calls int
	faultHook = func(string) error { calls++; return syscall.EIO }
	defer func() { faultHook = nil }()
	for range 100 {
		mustRun(t, b, circuit.Success, nil)
	}
	if calls != 0 {
		t.Fatalf("100 calls on a closed circuit made %d filesystem operations, want 0", calls)
	}
}

// mountOrSkip mounts source on target or skips the test when this process
// may not mount.
func mountOrSkip(t *testing.T, source, target, fstype string, flags uintptr, data string) {
	t.Helper()
	if err := syscall.Mount(source, target, fstype, flags, data); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOSYS) {
			t.Skipf("mount %s on %s not permitted here (%v): skipping the real fault", fstype, target, err)
		}
		t.Fatalf("mount %s on %s: %v", fstype, target, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(target, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", target, err)
		}
	})
}

// realFaultCheck runs a call that must fail with want, then clears the
// fault with clearFault and checks that the circuit works again.
func realFaultCheck(t *testing.T, dir string, b *circuit.Breaker, want syscall.Errno, clearFault func()) {
	t.Helper()
	ctx := t.Context()
	record := filepath.Join(dir, circuit.Key(faultCircuit)+".json")
	before, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}

	// A settlement that must write: the failure is counted.
	var ran bool
	err = faultRun(circuit.Failure, errLedgerDown)(ctx, b, &ran)
	var se *circuit.StateError
	if !errors.As(err, &se) || !se.Ran || !errors.Is(err, want) || !errors.Is(err, errLedgerDown) {
		t.Fatalf("settling on a failing filesystem: %v; want a StateError after the run wrapping %v and the operation's error", err, want)
	}
	// A new circuit's first call writes nothing, and runs; its first
	// failure must create its record.
	other := "ledger-api:refund"
	if err := b.Run(ctx, other, faultPolicy, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
		t.Fatalf("a healthy first call on a failing filesystem: %v, want nil: it writes nothing", err)
	}
	err = b.Run(ctx, other, faultPolicy, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errLedgerDown })
	if !errors.As(err, &se) || !se.Ran || !errors.Is(err, want) {
		t.Fatalf("a new circuit's first failure on a failing filesystem: %v; want a StateError after the run wrapping %v", err, want)
	}
	if after, err := os.ReadFile(record); err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the record changed on a failing filesystem: %q (%v), was %q", after, err, before)
	}
	if _, err := decode(before); err != nil {
		t.Fatal(err)
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(temps) != 0 {
		t.Fatalf("temporary files left: %q", temps)
	}

	clearFault()
	time.Sleep(owedRetry) // a refused settlement is tried again this often
	for _, name := range []string{faultCircuit, other} {
		if err := b.Run(ctx, name, faultPolicy, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errLedgerDown }); err != errLedgerDown {
			t.Fatalf("%s once the fault cleared: %v, want the operation's error", name, err)
		}
		// The failure whose settlement was refused is written first, once;
		// this one then opens the circuit.
		if snap, err := b.Snapshot(ctx, name); err != nil || snap.Failures != 2 || snap.State != circuit.StateOpen {
			t.Fatalf("%s once the fault cleared: %+v, %v; want open with 2 failures", name, snap, err)
		}
	}
}

func TestRealFaultENOSPC(t *testing.T) {
	mnt := t.TempDir()
	mountOrSkip(t, "tmpfs", mnt, "tmpfs", 0, "size=512k,mode=0700")
	dir := filepath.Join(mnt, "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(s)
	mustClear(t, b)

	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the tmpfs: %v", err)
			}
			break
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	realFaultCheck(t, dir, b, syscall.ENOSPC, func() {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRealFaultEROFS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(s)
	mustClear(t, b)

	mountOrSkip(t, dir, dir, "", syscall.MS_BIND, "")
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("remounting %s read-only not permitted here (%v): skipping the real fault", dir, err)
	}
	realFaultCheck(t, dir, b, syscall.EROFS, func() {
		if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND, ""); err != nil {
			t.Fatalf("remounting %s read-write: %v", dir, err)
		}
	})
}

// TestDirSyncFaultCountsOnce: a failure whose record was renamed into
// place before the directory's fsync failed is refused, and still landed.
// Once the directory syncs again, the next call finds that record: it is
// admitted, and its own failure is the second counted, not the third
// (which would open the circuit under a threshold of 3).
func TestDirSyncFaultCountsOnce(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(s)
	p := circuit.Policy{FailureThreshold: 3, Cooldown: time.Minute, ProbeLease: 10 * time.Second}
	ctx := t.Context()
	fail := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errLedgerDown }
	faultHook = func(op string) error {
		if op == "dirsync" {
			return syscall.EIO
		}
		return nil
	}
	err = b.Run(ctx, faultCircuit, p, fail)
	faultHook = nil
	var se *circuit.StateError
	if !errors.As(err, &se) || !se.Ran || !errors.Is(err, syscall.EIO) {
		t.Fatalf("a failure whose directory sync failed: %v, want a StateError after the call, wrapping EIO", err)
	}
	if rec, _, err := s.Load(ctx, faultCircuit); err != nil || rec == nil || rec.Failures != 1 {
		t.Fatalf("Load once the directory syncs = %+v, %v; want the failure's record, landed", rec, err)
	}
	if err := b.Run(ctx, faultCircuit, p, fail); !errors.Is(err, errLedgerDown) || errors.As(err, &se) {
		t.Fatalf("the next call: %v, want it admitted and its own failure returned", err)
	}
	snap, err := b.Snapshot(ctx, faultCircuit)
	if err != nil || snap.Failures != 2 || snap.State != circuit.StateClosed {
		t.Fatalf("Snapshot = %+v, %v; want 2 failures, closed", snap, err)
	}
}
