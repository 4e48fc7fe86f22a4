//go:build linux

package filestore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// namesAtHome returns n circuit names whose tags share one home slot in
// the change index: the first n-1 fill the target's probe window, and
// the last, which a writer cannot find a slot for, uses a spill counter.
func namesAtHome(n int) []string {
	home := func(name string) int {
		return int(tagOf(sha256.Sum256([]byte(name)))>>1) % slotCount
	}
	want := home("ledger")
	names := []string{}
	for i := 0; len(names) < n-1; i++ {
		if name := fmt.Sprintf("filler-%d", i); home(name) == want {
			names = append(names, name)
		}
	}
	return append(names, "ledger")
}

// TestLostRecordWithoutSlot removes the record of an open circuit that
// has no slot of its own in the change index (its probe window full), and
// so no mark a reader could judge the missing file by. A process that
// never read the record cannot tell the loss, and takes the circuit for a
// new, closed one. The process that holds the open record, rejecting
// calls with its copy, must read the file again within the recheck, find
// the loss, and make the circuit unknown: the next call anywhere is the
// probe. The bound: calls admitted as closed by a newcomer for at most
// the recheck after the removal, while a process that read the record
// calls.
func TestLostRecordWithoutSlot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	names := namesAtHome(probeWindow + 1)
	fillers := circuit.New(openDir(t, dir))
	for _, name := range names[:probeWindow] {
		if ran, _ := failN(ctx, fillers, name, 1); ran != 1 {
			t.Fatal(ran)
		}
	}
	s := openDir(t, dir)
	obs := &lostCounter{}
	opener := circuit.New(s, circuit.WithObserver(obs))
	if ran, _ := failN(ctx, opener, "ledger", p3.FailureThreshold); ran != p3.FailureThreshold {
		t.Fatal(ran)
	}
	if c := s.entry("ledger").ctr.Load(); c == nil || c.owned {
		t.Fatalf("ledger has a slot of its own (%v): the test needs one beyond the slots", c)
	}
	newcomer := circuit.New(openDir(t, dir))
	if err := os.Remove(recordPathOf(dir, "ledger")); err != nil {
		t.Fatal(err)
	}
	removed := time.Now()
	ok := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
	closed := 0
	for obs.n.Load() == 0 && time.Since(removed) < recheck+2*time.Second {
		err := opener.Run(ctx, "ledger", p3, ok)
		var oe *circuit.OpenError
		if err != nil && !errors.As(err, &oe) {
			t.Fatalf("the opener's call: %v", err)
		}
		if err := newcomer.Run(ctx, "ledger", p3, ok); err == nil && obs.n.Load() == 0 {
			closed++
		}
		time.Sleep(10 * time.Millisecond)
	}
	found := time.Since(removed)
	t.Logf("loss found %v after the removal; the newcomer admitted %d calls as closed before it", found.Round(time.Millisecond), closed)
	if obs.n.Load() == 0 {
		t.Fatalf("the opener did not find the loss within %v of the removal (recheck %v)", found.Round(time.Millisecond), recheck)
	}
	if found > recheck+500*time.Millisecond {
		t.Fatalf("the loss was found %v after the removal, want within the recheck (%v)", found.Round(time.Millisecond), recheck)
	}
	snap, err := newcomer.Snapshot(ctx, "ledger")
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Exists {
		t.Fatalf("after the loss the newcomer still reads no record: %+v", snap)
	}
}
