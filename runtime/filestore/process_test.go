//go:build linux

package filestore

// TestWriterKilledAtEachStep runs writer processes, killed at each step of
// the write sequence: the test binary re-executes itself with
// -test.run=^TestHelperProcess$ and an environment variable naming the
// child's role, as the standard library's os/exec tests do. It is in package
// filestore because the writer stops at a named step through the unexported
// stepHook. TestProcesses runs storeprocess's multi-process checks of the
// breaker over a shared state directory.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver/drivertest"
	"github.com/circuitgen/circuitgen/runtime/internal/storeprocess"
)

// Environment of a helper process.
const (
	envRole = "CIRCUITGEN_TEST_HELPER" // "writer"
	envDir  = "CIRCUITGEN_TEST_DIR"    // the shared state directory
	envStep = "CIRCUITGEN_TEST_STEP"   // writer: the write step to stop at
)

const helperCircuit = "inventory-api"

// helperScripts are the bodies of further helper processes, by role: each
// runs in a child that re-executes the test binary with envRole naming it
// (startScript, startLinChild, startSoakChild), and exits 0 when it
// returns nil.
var helperScripts = map[string]func() error{}

var helperBase = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// processConfig shares a state directory between the processes of
// TestProcesses.
var processConfig = storeprocess.ProcessConfig{
	Env: func(t *testing.T) []string {
		return []string{envDir + "=" + filepath.Join(t.TempDir(), "state")}
	},
	Open: func(t *testing.T) circuit.Store {
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			t.Fatal(err)
		}
		return s
	},
}

// TestProcesses runs storeprocess's multi-process checks: processes racing
// for one half-open probe, and a probe killed mid-call.
func TestProcesses(t *testing.T) { storeprocess.Processes(t, processConfig) }

// TestHelperProcess is not a test: it is the body of the helper processes
// of TestWriterKilledAtEachStep (envRole "writer") and of TestProcesses.
// Run as neither it does nothing.
func TestHelperProcess(t *testing.T) {
	if script := helperScripts[os.Getenv(envRole)]; script != nil {
		if err := script(); err != nil {
			fmt.Fprintf(os.Stderr, "helper %s: %v\n", os.Getenv(envRole), err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if os.Getenv(envRole) != "writer" {
		storeprocess.HelperProcess(t, processConfig)
		return
	}
	if err := helperWriter(); err != nil {
		fmt.Fprintf(os.Stderr, "helper writer: %v\n", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// helperWriter replaces the circuit's record with its successor and stops
// for good at the write step named by envStep, after printing "at <step>".
// It prints "done" if the write finishes without reaching that step.
func helperWriter() error {
	s, err := Open(os.Getenv(envDir))
	if err != nil {
		return err
	}
	ctx := context.Background()
	cur, _, err := s.Load(ctx, helperCircuit)
	if err != nil || cur == nil {
		return fmt.Errorf("load: %v, %v", cur, err)
	}
	stop := os.Getenv(envStep)
	stepHook = func(step string) {
		if step == stop {
			fmt.Printf("at %s\n", step)
			select {} // until killed
		}
	}
	if err := s.Replace(ctx, helperCircuit, cur, successor(cur)); err != nil {
		return err
	}
	fmt.Println("done")
	return nil
}

// successor returns the next revision of r with one more failure.
func successor(r *driver.Record) *driver.Record {
	next := *r
	next.Version++
	next.Failures++
	next.UpdatedAt = next.UpdatedAt.Add(time.Second)
	return &next
}

// killWriterAt runs a writer on dir until it stops at step, then kills it
// with SIGKILL.
func killWriterAt(t *testing.T, dir, step string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envRole+"=writer", envDir+"="+dir, envStep+"="+step)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }() // after a failure
	lines, stopped := bufio.NewScanner(out), false
	for !stopped && lines.Scan() {
		stopped = lines.Text() == "at "+step
	}
	if !stopped {
		t.Fatalf("writer did not stop at %s: last line %q, %v", step, lines.Text(), lines.Err())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.Exited() {
		t.Fatalf("writer: Wait = %v, want death by SIGKILL", err)
	}
}

func TestWriterKilledAtEachStep(t *testing.T) {
	steps := []struct {
		name       string
		renamed    bool // the new record is in place
		leftTemp   bool // a temporary file is left behind
		wantOnDisk string
	}{
		{name: "create", leftTemp: true},
		{name: "write", leftTemp: true},
		{name: "fsync", leftTemp: true},
		{name: "close", leftTemp: true},
		{name: "rename", renamed: true},
		{name: "dirsync", renamed: true},
	}
	for _, tt := range steps {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			ctx := t.Context()
			parent, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			old := &driver.Record{
				Name: helperCircuit, State: circuit.StateClosed, Failures: 1, Generation: 1,
				Incarnation: "0123456789abcdef0123456789abcdef", Version: 1, UpdatedAt: helperBase,
			}
			if err := parent.Replace(ctx, helperCircuit, nil, old); err != nil {
				t.Fatal(err)
			}
			if got, _, err := parent.Load(ctx, helperCircuit); err != nil || got.Version != 1 {
				t.Fatalf("parent Load = %+v, %v", got, err) // the parent's copy is now warm
			}

			killWriterAt(t, dir, tt.name)

			temps, err := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.leftTemp != (len(temps) == 1) || len(temps) > 1 {
				t.Fatalf("temporary files after a crash at %s: %q, want leftover = %v", tt.name, temps, tt.leftTemp)
			}

			want := old
			if tt.renamed {
				want = successor(old)
			}
			// Both a fresh process's view and the warm parent's see the
			// same whole record.
			fresh, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			for who, s := range map[string]*Store{"fresh store": fresh, "parent": parent} {
				got, _, err := s.Load(ctx, helperCircuit)
				if err != nil {
					t.Fatalf("%s: Load after a crash at %s: %v", who, tt.name, err)
				}
				if got == nil || got.Version != want.Version || got.Failures != want.Failures {
					t.Fatalf("%s: Load after a crash at %s = %+v, want version %d", who, tt.name, got, want.Version)
				}
			}

			// The lock died with the writer: a new write goes through at
			// once, and sweeps the leftover.
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			next := successor(want)
			if err := fresh.Replace(wctx, helperCircuit, want, next); err != nil {
				t.Fatalf("Replace after a crash at %s: %v", tt.name, err)
			}
			if temps, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(temps) != 0 {
				t.Fatalf("temporary files after the next write: %q", temps)
			}
			if got, _, err := parent.Load(ctx, helperCircuit); err != nil || got.Version != next.Version {
				t.Fatalf("parent Load after the next write = %+v, %v; want version %d", got, err, next.Version)
			}
		})
	}
}

// TestConformance runs the drivertest suite. Its Corrupt hook writes the
// corrupt bytes the way a writer in another process would (through a second
// Store, stopped before its rename to swap the temporary file's contents),
// so that the store under test learns of the change as it learns of every
// change: a store trusts its decoded copy while no writer reports a change.
func TestConformance(t *testing.T) {
	drivertest.Run(t, drivertest.Config{
		Open: func(t *testing.T) circuit.Store {
			s, err := Open(filepath.Join(t.TempDir(), "state"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Corrupt: func(t *testing.T, s circuit.Store, name string) {
			corruptThroughWriter(t, s.(*Store).Dir(), name, func(valid []byte) []byte { return valid[:len(valid)/2] })
		},
		// A read-only file system: every creation of a temporary record
		// fails with EROFS, as the kernel's would (TestRealFaultEROFS
		// remounts a directory read-only where the test may mount).
		RefuseWrites: func(t *testing.T, _ circuit.Store) func() {
			faultHook = func(op string) error {
				if op == "create" || op == "lock" {
					return syscall.EROFS
				}
				return nil
			}
			return func() { faultHook = nil }
		},
	})
}

// corruptThroughWriter makes a writer on dir store bad(its valid encoding)
// as name's record.
func corruptThroughWriter(t *testing.T, dir, name string, bad func(valid []byte) []byte) {
	t.Helper()
	other, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cur, _, err := other.Load(t.Context(), name)
	if err != nil || cur == nil {
		t.Fatalf("corrupt: Load = %+v, %v", cur, err)
	}
	next := *cur
	next.Version++
	var tampered bool
	stepHook = func(step string) {
		if step != "close" {
			return
		}
		temps, _ := filepath.Glob(filepath.Join(dir, circuit.Key(name)+".json.tmp-*"))
		if len(temps) != 1 {
			t.Errorf("corrupt: temporary files %q, want one", temps)
			return
		}
		valid, err := os.ReadFile(temps[0])
		if err == nil {
			err = os.WriteFile(temps[0], bad(valid), 0o600)
		}
		if err != nil {
			t.Error(err)
			return
		}
		tampered = true
	}
	defer func() { stepHook = nil }()
	if err := other.Replace(t.Context(), name, cur, &next); err != nil {
		t.Fatalf("corrupt: Replace: %v", err)
	}
	if !tampered {
		t.Fatal("corrupt: the write was not tampered with")
	}
}
