//go:build linux

package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// TestSnapshotNoRead shows that Breaker.Snapshot of an unchanged record
// reads no file, while it still sees every change another store instance
// (as another process would) makes: after each change one snapshot reads
// the record, and the next snapshots make no read system call at all.
func TestSnapshotNoRead(t *testing.T) {
	pio, err := openProcIO()
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")
	open := func() *filestore.Store {
		s, err := filestore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	_, writerUp, writerDown := guarded(open()) // the other "process"
	reader := circuit.New(open())
	if _, err := writerUp.Count(ctx, 1); err != nil { // creates the record
		t.Fatal(err)
	}

	// reads returns how many read system calls fn made.
	reads := func(fn func()) int64 {
		before, err := pio.read()
		if err != nil {
			t.Fatal(err)
		}
		fn()
		after, err := pio.read()
		if err != nil {
			t.Fatal(err)
		}
		return after.Syscr - before.Syscr - 1 // the second reading's own pread
	}
	const n = 100_000
	for failures := 1; failures <= 3; failures++ {
		if _, err := writerDown.Count(ctx, 1); err == nil {
			t.Fatal("the failing backend succeeded")
		}
		var snap circuit.Snapshot
		first := reads(func() { snap, err = reader.Snapshot(ctx, "bench-count") })
		if err != nil || snap.Failures != failures {
			t.Fatalf("after failure %d: Snapshot = %+v, %v; want %d failures", failures, snap, err, failures)
		}
		if first < 1 {
			t.Errorf("after failure %d: the first snapshot read nothing (%d reads), yet saw the change", failures, first)
		}
		rest := reads(func() {
			for range n {
				if snap, err = reader.Snapshot(ctx, "bench-count"); err != nil || snap.Failures != failures {
					t.Fatalf("Snapshot = %+v, %v", snap, err)
				}
			}
		})
		t.Logf("after failure %d: first snapshot %d read(2)s, the next %d snapshots %d", failures, first, n, rest)
		if rest != 0 {
			t.Errorf("%d snapshots of an unchanged record made %d read system calls, want 0", n, rest)
		}
	}
}
