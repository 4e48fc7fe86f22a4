//go:build linux

package filestore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TestRecordsRemovedByHand: records removed behind the store's back (rm
// *.json), which is outside the store's model, are bounded as
// docs/file-store.md says: the circuit starts afresh, closed with no
// failures, so at most one threshold of failing calls runs before it opens
// again; a process's copy is dropped at its first write, with no livelock;
// Clear succeeds.
func TestRecordsRemovedByHand(t *testing.T) {
	rmRecords := func(t *testing.T, dir string) {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, p := range paths {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("WhileOpen", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		clk := &faultClock{now: faultBase}
		b := circuit.New(openDir(t, dir), circuit.WithClock(clk.Now))
		ctx := t.Context()
		if ran, _ := failN(ctx, b, "ledger", 3); ran != 3 {
			t.Fatal(ran)
		}
		rmRecords(t, dir)
		clk.now = clk.now.Add(p3.Cooldown + time.Second)
		ran := false
		err := b.Run(ctx, "ledger", p3, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
		if err != nil || !ran {
			t.Fatalf("after the cooldown, with the record removed: %v (ran %v), want the call run", err, ran)
		}
	})
	t.Run("WhileClosed", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		b := circuit.New(openDir(t, dir))
		other := circuit.New(openDir(t, dir))
		ctx := t.Context()
		if ran, _ := failN(ctx, b, "ledger", 1); ran != 1 {
			t.Fatal(ran)
		}
		if _, err := other.Snapshot(ctx, "ledger"); err != nil { // the other's copy is warm
			t.Fatal(err)
		}
		rmRecords(t, dir)
		// The first call runs on this process's copy (closed, one failure),
		// and its failure finds the record gone: it counts on none.
		ran, err := failN(ctx, b, "ledger", p3.FailureThreshold+1)
		if ran != p3.FailureThreshold || !errors.Is(err, circuit.ErrOpen) {
			t.Fatalf("failing calls after rm: %d ran, last %v; want one threshold (%d), then open", ran, err, p3.FailureThreshold)
		}
		for who, br := range map[string]*circuit.Breaker{"this": b, "other": other} {
			if snap, err := br.Snapshot(ctx, "ledger"); err != nil || snap.State != circuit.StateOpen {
				t.Fatalf("%s process after a threshold of failures: %+v, %v; want open", who, snap, err)
			}
		}
	})
	t.Run("Clear", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		b := circuit.New(openDir(t, dir))
		ctx := t.Context()
		failN(ctx, b, "ledger", 3)
		rmRecords(t, dir)
		if err := b.Clear(ctx, "ledger"); err != nil {
			t.Fatalf("Clear of a removed record: %v", err)
		}
		if snap, err := b.Snapshot(ctx, "ledger"); err != nil || snap.State != circuit.StateClosed || snap.Failures != 0 || snap.Probing {
			t.Fatalf("after Clear: %+v, %v; want closed, no failures", snap, err)
		}
	})
}

// dirReplacements take a state directory away by hand, for another to be
// made in its place.
var dirReplacements = []struct {
	name   string
	remove func(dir string) error
}{
	{"Removed", os.RemoveAll}, // rm -rf
	{"MovedAside", func(dir string) error { return os.Rename(dir, dir+".old") }}, // mv
}

// TestDirectoryRemovedAndRemade: the state directory removed (rm -rf) or
// moved aside (mv), and made anew by another process, which opens the
// circuit there. This process, calling slowly (a few uses of its copy a
// second), sees it within recheck of its last check and admits no call.
func TestDirectoryRemovedAndRemade(t *testing.T) {
	for _, tt := range dirReplacements {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			ctx := t.Context()
			b := circuit.New(openDir(t, dir))
			if ran, _ := failN(ctx, b, "ledger", 1); ran != 1 {
				t.Fatal(ran)
			}
			if err := tt.remove(dir); err != nil {
				t.Fatal(err)
			}
			sc := startScript(t, "openit", dir, "", nil, "")
			sc.expect(t, "opened")
			sc.wait(t)
			rejectsWithin(t, b, time.Now(), recheck+time.Second, "the directory was made anew with the circuit open")
		})
	}
}

func init() {
	// openit: opens helperCircuit with three failures.
	helperScripts["openit"] = func() error {
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		if ran, err := failN(context.Background(), circuit.New(s), "ledger", 3); ran != 3 || err != errBoom {
			return fmt.Errorf("%d ran, %v", ran, err)
		}
		say("opened")
		return nil
	}
	// unwritable: opens the store, says "opened" and waits for a line,
	// then makes eight failing calls at threshold 3; prints how many ran and
	// the last error.
	helperScripts["unwritable"] = func() error {
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		say("opened")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return err
		}
		ran, last := failN(context.Background(), circuit.New(s), "ledger", 8)
		say("ran %d", ran)
		say("%s", outcome(last))
		return nil
	}
}

// unprivileged returns a copy of the test binary that uid 65534 may run,
// and a directory that uid owns (mode 0700) in a tree it may enter.
func unprivileged(t *testing.T) (bin, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a worker as another user")
	}
	root, err := os.MkdirTemp("", "fs-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(root, "filestore.test")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return bin, dir
}

// chownTree gives dir and everything in it to uid.
func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUnwritableStoreFailsClosed: once a write for a circuit
// fails, no call on it is admitted until a write succeeds. A worker run as
// uid 65534, whose directory is made 0500 once it opened the store, makes
// eight failing calls at threshold 3: the first runs (its settlement fails), the others are
// refused before running. A lock replaced by a directory does the same in
// this process; once it is removed, calls run and failures count.
func TestUnwritableStoreFailsClosed(t *testing.T) {
	t.Run("ReadOnlyDirAsNobody", func(t *testing.T) {
		bin, dir := unprivileged(t)
		ctx := t.Context()
		if ran, _ := failN(ctx, circuit.New(openDir(t, dir)), "ledger", 1); ran != 1 {
			t.Fatal(ran)
		}
		chownTree(t, dir, 65534)
		sc := startScript(t, "unwritable", dir, "", &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}, bin)
		sc.expect(t, "opened") // Open refuses a directory it cannot write
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(sc.in, "go\n"); err != nil {
			t.Fatal(err)
		}
		var ran int
		fmt.Sscanf(sc.expect(t, "ran "), "ran %d", &ran)
		last := sc.next(t)
		sc.wait(t)
		t.Logf("as uid 65534 on a 0500 directory: %d of 8 failing calls ran; last: %s", ran, last)
		if ran > 1 || !strings.HasPrefix(last, "state: ") {
			t.Fatalf("%d of 8 failing calls ran, last %q; want at most 1, then StateErrors", ran, last)
		}
	})
	t.Run("LockIsDirectory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		ctx := t.Context()
		b := circuit.New(openDir(t, dir))
		if ran, _ := failN(ctx, b, "ledger", 1); ran != 1 {
			t.Fatal(ran)
		}
		lock := filepath.Join(dir, circuit.Key("ledger")+".lock")
		if err := os.Remove(lock); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(lock, 0o700); err != nil {
			t.Fatal(err)
		}
		ran, last := failN(ctx, b, "ledger", 8)
		var se *circuit.StateError
		if ran > 1 || !errors.As(last, &se) {
			t.Fatalf("with the lock a directory: %d of 8 failing calls ran, last %v; want at most 1, then StateErrors", ran, last)
		}
		if err := os.Remove(lock); err != nil {
			t.Fatal(err)
		}
		time.Sleep(owedRetry)
		// The failure whose settlement was refused is written first: the
		// next failure is the third, and opens the circuit.
		if ran, last := failN(ctx, b, "ledger", 2); ran != 1 || !errors.As(last, new(*circuit.OpenError)) {
			t.Fatalf("once the lock is back: %d ran, %v; want 1, then an OpenError", ran, last)
		}
		if snap, err := b.Snapshot(ctx, "ledger"); err != nil || snap.State != circuit.StateOpen {
			t.Fatalf("after 3 counted failures: %+v, %v; want open", snap, err)
		}
	})
}

// TestForeignOwnerRefused: a state directory, record or lock
// owned by another user is refused, with an error naming the owner and the
// fix: by Open for the directory, by the call for the others.
func TestForeignOwnerRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to another user")
	}
	for _, tt := range []struct {
		name string
		file func(dir string) string
	}{
		{"Dir", func(dir string) string { return dir }},
		{"Record", func(dir string) string { return recordPathOf(dir, "ledger") }},
		{"Lock", func(dir string) string { return filepath.Join(dir, circuit.Key("ledger")+".lock") }},
		{"Index", func(dir string) string { return filepath.Join(dir, indexName) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			ctx := t.Context()
			if ran, _ := failN(ctx, circuit.New(openDir(t, dir)), "ledger", 1); ran != 1 {
				t.Fatal(ran)
			}
			if err := os.Lchown(tt.file(dir), 65534, 65534); err != nil {
				t.Fatal(err)
			}
			s, err := Open(dir)
			if tt.name == "Dir" {
				var de *DirError
				if !errors.As(err, &de) {
					t.Fatalf("Open: %v, want a DirError", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				var ran int
				ran, err = failN(ctx, circuit.New(s), "ledger", 1)
				var se *circuit.StateError
				if !errors.As(err, &se) || ran > 1 {
					t.Fatalf("%v (ran %d), want a StateError", err, ran)
				}
			}
			if msg := err.Error(); !strings.Contains(msg, "owned by uid 65534") || !strings.Contains(msg, "chown") {
				t.Fatalf("error %q does not name the owner and the fix", msg)
			}
		})
	}
}
