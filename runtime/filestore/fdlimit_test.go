//go:build linux

package filestore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

func init() {
	// nofds: a process that starts with no file descriptor to spare (its
	// RLIMIT_NOFILE soft limit 0) makes calls on the circuit, then gets its
	// limit back and makes more. It prints each call's outcome, "restored"
	// between the two.
	helperScripts["nofds"] = func() error {
		var orig unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &orig); err != nil {
			return err
		}
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		b := circuit.New(s)
		call := func() {
			err := b.Run(context.Background(), helperCircuit, p3, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
			say("%s", outcome(err))
		}
		lim := orig
		lim.Cur = 0
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			return err
		}
		for range 3 {
			call()
		}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &orig); err != nil {
			return err
		}
		say("restored")
		for range 3 {
			call()
		}
		err = b.Run(context.Background(), "other-api", p3, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errBoom })
		say("%s", outcome(err))
		return nil
	}
}

// TestNoFDsAtStart: a process whose first touches of the store fail with
// EMFILE (no descriptor to spare) refuses its calls then, and once it has
// descriptors again sees the circuit another process holds open and writes
// by the index's anchor: nothing it failed to read at its start (the boot
// id, the index) is taken as absent for good.
func TestNoFDsAtStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	s := openDir(t, dir)
	b := circuit.New(s)
	if ran, _ := failN(ctx, b, helperCircuit, 3); ran != 3 {
		t.Fatalf("%d of 3 failing calls ran", ran)
	}
	sc := startScript(t, "nofds", dir, "", nil, "")
	var outs []string
	for range 8 {
		outs = append(outs, sc.next(t))
	}
	sc.wait(t)
	t.Logf("child's calls: %q", outs)
	for i, o := range outs[:7] {
		if o != "open" && o != "restored" && !strings.HasPrefix(o, "state: ") {
			t.Errorf("child's call %d: %q; want it rejected (open, or a StateError while it has no fds)", i, o)
		}
	}
	if outs[6] != "open" {
		t.Errorf("child's last call, with its fds back: %q, want open", outs[6])
	}
	if outs[7] != "err: boom" {
		t.Errorf("child's failing call on another circuit: %q, want it run", outs[7])
	}
	m, err := mapIndex(s.path(indexName))
	if err != nil {
		t.Fatal(err)
	}
	defer unmap(m.data)
	boot, anchor := m.load(hdrBoot), m.load(hdrAnchor)
	if want := s.m.Load().anchor; boot != sboot(t, s) || int64(anchor) != want {
		t.Errorf("index header after the child wrote: boot %x, anchor %d; want this boot's %x and the anchor %d this process took",
			boot, int64(anchor), sboot(t, s), want)
	}
}
