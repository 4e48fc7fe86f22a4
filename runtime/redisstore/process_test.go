package redisstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// Environment of a helper process.
const (
	envRole    = "CIRCUITGEN_HELPER_ROLE"    // "race" or "claim"
	envPrefix  = "CIRCUITGEN_HELPER_PREFIX"  // the store's key prefix
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
	c := newClient(t, redisURL(t))
	s := redisstore.New(c, os.Getenv(envPrefix))
	b := circuit.New(s)
	lease, _ := time.ParseDuration(os.Getenv(envLease))
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: lease}
	ctx := context.Background()
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

// helper starts a helper process with role and extra environment.
func helper(t *testing.T, role, prefix string, lease time.Duration, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envRole+"="+role, envPrefix+"="+prefix, envLease+"="+lease.String())
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

// openPast stores an open record for helperName whose cooldown ended a
// second ago by the server's clock, as if it had opened long before.
func openPast(t *testing.T, s *redisstore.Store) *circuit.Record {
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
	next := circuit.Settle(cur, g, circuit.Failure, p, now.Add(-2*time.Second))
	if next == nil || next.State != circuit.StateOpen {
		t.Fatalf("could not open %+v", cur)
	}
	if err := s.Replace(ctx, helperName, cur, next); err != nil {
		t.Fatal(err)
	}
	return next
}

// prefixOf returns s's key prefix.
func prefixOf(s *redisstore.Store) string { return strings.TrimSuffix(s.Key(""), circuit.Key("")) }

// TestProbeRaceProcesses starts 10 processes that call one circuit at the
// same instant after its cooldown: in each episode exactly one runs (the
// probe), the others are rejected, and the probe closes the circuit.
func TestProbeRaceProcesses(t *testing.T) {
	s, _ := newStore(t)
	prefix := prefixOf(s)
	const procs, episodes = 10, 3
	for ep := range episodes {
		opened := openPast(t, s)
		barrier := time.Now().Add(2 * time.Second)
		var scanners []*bufio.Scanner
		var cmds []*exec.Cmd
		for range procs {
			cmd, sc := helper(t, "race", prefix, time.Minute, envBarrier+"="+strconv.FormatInt(barrier.UnixNano(), 10))
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
}

// TestKilledProbeProcess kills a process holding the half-open probe: the
// circuit rejects calls until the probe's lease expires, then admits a new
// probe, which closes it.
func TestKilledProbeProcess(t *testing.T) {
	s, _ := newStore(t)
	prefix := prefixOf(s)
	const lease = time.Second
	openPast(t, s)
	cmd, sc := helper(t, "claim", prefix, lease)
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
	var open *circuit.OpenError
	err := b.Run(t.Context(), helperName, p, op(circuit.Success))
	if !errors.As(err, &open) || open.State != circuit.StateHalfOpen {
		t.Fatalf("Run while the dead probe's lease runs = %v, want OpenError (half-open)", err)
	}
	for {
		err = b.Run(t.Context(), helperName, p, op(circuit.Success))
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
}
