//go:build linux

package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

func init() {
	// failn: envArg failing calls on "ledger" (p3); says "opened" when the
	// circuit is open after them.
	helperScripts["failn"] = func() error {
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(os.Getenv(envArg))
		if err != nil {
			return err
		}
		b := circuit.New(s)
		ctx := context.Background()
		if ran, err := failN(ctx, b, "ledger", n); ran != n || err != errBoom {
			return fmt.Errorf("%d of %d ran, last %v", ran, n, err)
		}
		snap, err := b.Snapshot(ctx, "ledger")
		if err != nil || snap.State != circuit.StateOpen {
			return fmt.Errorf("after %d failures: %+v, %v", n, snap, err)
		}
		say("opened")
		return nil
	}
}

// restoreInPlace writes data over the file at path, keeping its inode:
// with pwrite, as dd conv=notrunc does, or truncated first, as cp does.
func restoreInPlace(t *testing.T, path string, data []byte, truncate bool) {
	t.Helper()
	flag := os.O_WRONLY
	if truncate {
		flag |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// rejectsWithin calls "ledger" every 200ms (a slow caller: few uses of its
// copy a second) until a call is refused as open without running, and fails
// the test if none is within d of since. A call that runs is Ignored: it
// writes nothing, so a stale copy is not corrected by its settlement.
func rejectsWithin(t *testing.T, b *circuit.Breaker, since time.Time, d time.Duration, after string) {
	t.Helper()
	for {
		ran := false
		err := b.Run(t.Context(), "ledger", p3, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Ignored, nil })
		if errors.Is(err, circuit.ErrOpen) && !ran {
			t.Logf("rejected %v after %s", time.Since(since).Round(time.Millisecond), after)
			return
		}
		if time.Since(since) >= d {
			t.Fatalf("%v after %s: %v (ran %v), want rejected", time.Since(since).Round(time.Millisecond), after, err, ran)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestIndexRolledBackInPlace: the change index restored by hand, in place
// (same inode, with pwrite or truncated first), from a copy taken after
// this process's first write. This process holds a closed copy of the
// record; another process opens the circuit.
//
//   - WriteAfterRollback: this process writes once more (its copy is of
//     that write), the index is restored, and the other process opens the
//     circuit with one write. That write must not give the counter a value
//     this process has seen (it once gave the same one: A-B-A): the next
//     call is rejected.
//   - RollbackHidesWrite: the other process opens the circuit, then the
//     index is restored, hiding that write from the counters. This process
//     must notice the restore within recheck, calling slowly, and reject.
func TestIndexRolledBackInPlace(t *testing.T) {
	for _, tt := range []struct {
		name                string
		truncate, hideWrite bool
	}{
		{"WriteAfterRollback/pwrite", false, false},
		{"WriteAfterRollback/truncate", true, false},
		{"RollbackHidesWrite/pwrite", false, true},
		{"RollbackHidesWrite/truncate", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			index := filepath.Join(dir, indexName)
			ctx := t.Context()
			b := circuit.New(openDir(t, dir))
			failN(ctx, b, "ledger", 1)
			saved, err := os.ReadFile(index)
			if err != nil {
				t.Fatal(err)
			}
			other := func(failures string) {
				sc := startScript(t, "failn", dir, failures, nil, "")
				sc.expect(t, "opened")
				sc.wait(t)
			}
			if tt.hideWrite {
				other("2")
				restoreInPlace(t, index, saved, tt.truncate)
				rejectsWithin(t, b, time.Now(), recheck+time.Second, "the index was rolled back over an opening")
				return
			}
			failN(ctx, b, "ledger", 1) // this process's copy: two failures
			restoreInPlace(t, index, saved, tt.truncate)
			other("1")
			rejectsWithin(t, b, time.Now(), 0, "the circuit was opened after the index was rolled back")
			if snap, err := b.Snapshot(ctx, "ledger"); err != nil || snap.State != circuit.StateOpen {
				t.Fatalf("snapshot: %+v, %v; want open", snap, err)
			}
		})
	}
}

// TestChangeTimeMovedUnderWriter: the index's status change time moves (a
// disk file system's writeback does so, here a chmod) while a write holds
// its counter, and another goroutine's check sees it first. The write goes
// on in the mapping it holds and succeeds; the copies taken before are
// dropped, and both goroutines then read the record the write left.
func TestChangeTimeMovedUnderWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	s := openDir(t, dir)
	b := circuit.New(s)
	failN(ctx, b, "ledger", 1)
	cur, _, err := s.Load(ctx, "ledger")
	if err != nil || cur == nil {
		t.Fatal(cur, err)
	}
	paused, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	faultHook = func(op string) error {
		if op == "create" { // the counter is held, the write not yet begun
			once.Do(func() { close(paused); <-resume })
		}
		return nil
	}
	defer func() { faultHook = nil }()
	done := make(chan error)
	go func() { done <- s.Replace(ctx, "ledger", cur, successor(cur)) }()
	<-paused
	time.Sleep(20 * time.Millisecond) // past a coarse timestamp's tick
	if err := os.Chmod(filepath.Join(dir, indexName), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.current(ctx, true); err != nil { // another goroutine's check
		t.Fatal(err)
	}
	close(resume)
	if err := <-done; err != nil {
		t.Fatalf("the write in flight: %v, want it to succeed", err)
	}
	if got, _, err := s.Load(ctx, "ledger"); err != nil || got == nil || got.Version != cur.Version+1 {
		t.Fatalf("after the write: %+v, %v; want version %d", got, err, cur.Version+1)
	}
}

func init() {
	// quietcalls: calls "ledger" from two goroutines, with a deadline, for 1.5s (past a
	// recheck, so that the copies the first write's change time moved are
	// read again), then says the read and write system calls of the process
	// (/proc/self/io) across 3.5s more of calls, and across 3.5s of an empty
	// loop of the same shape.
	helperScripts["quietcalls"] = func() error {
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		b := circuit.New(s)
		// A deadline, as a service's calls have: a timer pending later than
		// the recheck's.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		loop := func(d time.Duration, call bool) error {
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			end := time.Now().Add(d)
			for range 2 {
				wg.Go(func() {
					for time.Now().Before(end) {
						for range 1000 {
							if !call {
								continue
							}
							if err := b.Run(ctx, "ledger", p3, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
								errs <- err
								return
							}
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			return <-errs
		}
		if err := loop(1500*time.Millisecond, true); err != nil {
			return err
		}
		io0, err := procIO()
		if err != nil {
			return err
		}
		if err := loop(3500*time.Millisecond, true); err != nil {
			return err
		}
		io1, _ := procIO()
		_ = loop(3500*time.Millisecond, false)
		io2, _ := procIO()
		say("calls %d %d empty %d %d", io1[0]-io0[0], io1[1]-io0[1], io2[0]-io1[0], io2[1]-io1[1])
		return nil
	}
}

// procIO returns the syscr and syscw counters of /proc/self/io.
func procIO() ([2]int64, error) {
	var c [2]int64
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return c, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			c[0], _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			c[1], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return c, nil
}

// TestRecheckMakesNoReadOrWrite: a process calling a closed circuit for
// 3.5s, its mapping of the index checked three times or more, makes no more
// read or write system calls than an empty loop (the reading of the
// counters itself aside): the recheck is one lstat, and its timer, set
// again from its own tick while calls go on, never wakes the runtime's
// poller with a write.
func TestRecheckMakesNoReadOrWrite(t *testing.T) {
	if _, err := os.Stat("/proc/self/io"); err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "state")
	failN(t.Context(), circuit.New(openDir(t, dir)), "ledger", 1)
	sc := startScript(t, "quietcalls", dir, "", nil, "")
	var r, w, er, ew int64
	if _, err := fmt.Sscanf(sc.expect(t, "calls "), "calls %d %d empty %d %d", &r, &w, &er, &ew); err != nil {
		t.Fatal(err)
	}
	sc.wait(t)
	t.Logf("reads and writes across 3.5s of calls: %d, %d; of an empty loop: %d, %d", r, w, er, ew)
	if r > max(er, 2) || w > ew {
		t.Fatalf("3.5s of calls on a closed circuit made %d reads and %d writes, an empty loop %d and %d", r, w, er, ew)
	}
}
