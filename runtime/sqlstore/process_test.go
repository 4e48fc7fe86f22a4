package sqlstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// Environment of a helper process.
const (
	envRole    = "CIRCUITGEN_HELPER_ROLE"    // "race" or "claim"
	envBackend = "CIRCUITGEN_HELPER_BACKEND" // a backend's name
	envDSN     = "CIRCUITGEN_HELPER_DSN"     // the database
	envBarrier = "CIRCUITGEN_HELPER_BARRIER" // race: when to call, Unix nanoseconds
	envLease   = "CIRCUITGEN_HELPER_LEASE"   // the policy's ProbeLease
)

// helperName is the circuit the helper processes share.
const helperName = "payment-gateway:charge"

// probeHold is how long a racing helper's probe runs: long enough that
// every other racer calls while it is in flight.
const probeHold = time.Second

// TestHelperProcess is not a test: it is the body of the processes the
// multi-process tests start (the os/exec test pattern). It prints one line:
// "ran", "open", "claimed" or "error: ...".
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(envRole)
	if role == "" {
		t.Skip("helper process only")
	}
	var be backend
	for _, b := range backends {
		if b.name == os.Getenv(envBackend) {
			be = b
		}
	}
	s, err := sqlstore.New(be.open(t, os.Getenv(envDSN), nil), be.dialect)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	b := circuit.New(s)
	lease, _ := time.ParseDuration(os.Getenv(envLease))
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: lease}
	ctx := context.Background()
	if _, err := b.Snapshot(ctx, helperName); err != nil { // connect before the race
		fmt.Println("error:", err)
		os.Exit(1)
	}
	switch role {
	case "race":
		ns, _ := strconv.ParseInt(os.Getenv(envBarrier), 10, 64)
		time.Sleep(time.Until(time.Unix(0, ns)))
		err := b.Run(ctx, helperName, p, func(context.Context) (circuit.Outcome, error) {
			fmt.Println("ran")
			time.Sleep(probeHold)
			return circuit.Success, nil
		})
		if errors.Is(err, circuit.ErrOpen) {
			fmt.Println("open")
		} else if err != nil {
			fmt.Println("error:", err)
		}
	case "claim":
		tk, err := b.Allow(ctx, helperName, p)
		if err != nil || !tk.Probe() {
			fmt.Println("error: no probe claimed:", err)
			os.Exit(1)
		}
		fmt.Println("claimed")
		time.Sleep(time.Hour) // until killed
	}
	os.Exit(0)
}

// helper starts a helper process with role on backend b's database dsn.
func helper(t *testing.T, role string, b backend, dsn string, lease time.Duration, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envRole+"="+role, envBackend+"="+b.name, envDSN+"="+dsn, envLease+"="+lease.String())
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, bufio.NewScanner(out)
}

// openPast stores an open record for helperName whose cooldown ended two
// seconds ago by the store's clock.
func openPast(t *testing.T, s *sqlstore.Store) *circuit.Record {
	t.Helper()
	ctx := t.Context()
	cur, now, err := s.Load(ctx, helperName)
	if err != nil {
		t.Fatal(err)
	}
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second}
	if cur == nil {
		a := circuit.Admit(nil, helperName, p, now, newID)
		if err := s.Replace(ctx, helperName, nil, a.Next); err != nil {
			t.Fatal(err)
		}
		cur = a.Next
	}
	g := circuit.Grant{Incarnation: cur.Incarnation, Generation: cur.Generation}
	next := circuit.Settle(cur, g, circuit.Failure, p, now.Add(-3*time.Second))
	if next == nil || next.State != circuit.StateOpen {
		t.Fatalf("could not open %+v", cur)
	}
	if err := s.Replace(ctx, helperName, cur, next); err != nil {
		t.Fatal(err)
	}
	return next
}

// TestProbeRaceProcesses starts 10 processes that call one circuit at the
// same instant after its cooldown: in each episode exactly one runs (the
// probe), the others are rejected, and the probe closes the circuit.
func TestProbeRaceProcesses(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dsn := be.create(t)
			s, err := sqlstore.New(be.open(t, dsn, nil), be.dialect)
			if err != nil {
				t.Fatal(err)
			}
			const procs, episodes = 10, 3
			for ep := range episodes {
				opened := openPast(t, s)
				barrier := time.Now().Add(2 * time.Second)
				var scanners []*bufio.Scanner
				var cmds []*exec.Cmd
				for range procs {
					cmd, sc := helper(t, "race", be, dsn, time.Minute, envBarrier+"="+strconv.FormatInt(barrier.UnixNano(), 10))
					cmds = append(cmds, cmd)
					scanners = append(scanners, sc)
				}
				counts := map[string]int{}
				for i, sc := range scanners {
					line := "no output"
					if sc.Scan() {
						line = sc.Text()
					}
					counts[line]++
					_ = cmds[i].Wait()
				}
				t.Logf("episode %d: %v", ep+1, counts)
				if counts["ran"] != 1 || counts["open"] != procs-1 {
					t.Fatalf("episode %d: %v; want 1 ran and %d open", ep+1, counts, procs-1)
				}
				rec, _, err := s.Load(t.Context(), helperName)
				if err != nil || rec.State != circuit.StateClosed || rec.Generation != opened.Generation+1 {
					t.Fatalf("episode %d: after the probe %+v, %v; want closed in generation %d", ep+1, rec, err, opened.Generation+1)
				}
			}
		})
	}
}

// TestKilledProbeProcess kills a process holding the half-open probe: the
// circuit rejects calls until the probe's lease expires, then admits a new
// probe, which closes it.
func TestKilledProbeProcess(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dsn := be.create(t)
			s, err := sqlstore.New(be.open(t, dsn, nil), be.dialect)
			if err != nil {
				t.Fatal(err)
			}
			const lease = time.Second
			openPast(t, s)
			cmd, sc := helper(t, "claim", be, dsn, lease)
			if !sc.Scan() || sc.Text() != "claimed" {
				t.Fatalf("helper: %q, %v", sc.Text(), sc.Err())
			}
			claimed := time.Now()
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()

			b := circuit.New(s)
			p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: lease}
			succeed := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
			var open *circuit.OpenError
			err = b.Run(t.Context(), helperName, p, succeed)
			if !errors.As(err, &open) || open.State != circuit.StateHalfOpen {
				t.Fatalf("Run while the dead probe's lease runs = %v, want OpenError (half-open)", err)
			}
			for {
				err = b.Run(t.Context(), helperName, p, succeed)
				if err == nil {
					break
				}
				if !errors.As(err, &open) {
					t.Fatalf("Run = %v", err)
				}
				if time.Since(claimed) > lease+5*time.Second {
					t.Fatalf("no recovery %v after the claim: %v", time.Since(claimed), err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if waited := time.Since(claimed); waited < lease-100*time.Millisecond {
				t.Fatalf("a new probe ran %v after the claim, before the %v lease expired", waited, lease)
			}
			t.Logf("recovered %v after the killed probe's claim (lease %v)", time.Since(claimed).Round(time.Millisecond), lease)
			snap, err := b.Snapshot(t.Context(), helperName)
			if err != nil || snap.State != circuit.StateClosed {
				t.Fatalf("after the new probe: %+v, %v; want closed", snap, err)
			}
		})
	}
}
