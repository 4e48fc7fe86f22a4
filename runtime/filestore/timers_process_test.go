//go:build linux

package filestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

const envRejectionDir = "CIRCUITGEN_TEST_REJECTION_DIR"

var rejectionPolicy = circuit.Policy{FailureThreshold: 1, Cooldown: 2 * time.Second, ProbeLease: 5 * time.Second}

// TestRejectionHelper is the other process of TestStoppedAcrossTheDeadline
// and TestClosedByAnotherProcessEndsTheCachedRejection: it calls the
// circuit "api" every millisecond, prints "rejected <until ns>" on its
// first rejection and "admitted <store ns> <last until ns>" when a call
// runs, then exits.
func TestRejectionHelper(t *testing.T) {
	s, b, ok := helperBreaker(envRejectionDir)
	if !ok {
		return
	}
	ctx := context.Background()
	var until time.Time
	said := false
	for {
		ran := false
		err := b.Run(ctx, "api", rejectionPolicy, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
		if ran {
			fmt.Printf("admitted %d %d\n", s.Now().UnixNano(), until.UnixNano())
			os.Exit(0)
		}
		var open *circuit.OpenError
		if !errors.As(err, &open) {
			fmt.Println("error", err)
			os.Exit(2)
		}
		until = open.Until
		if !said {
			fmt.Printf("rejected %d\n", until.UnixNano())
			said = true
		}
		time.Sleep(time.Millisecond)
	}
}

// startHelper starts the test binary's helper test run (one of this file's
// helpers) with env set to dir, and returns it with the lines of its
// standard output.
func startHelper(t *testing.T, run, env, dir string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

// helperBreaker returns, in a helper process started with env set to a
// state directory, a store over it and a Breaker of the store; ok is false
// in any other process.
func helperBreaker(env string) (s *filestore.Store, b *circuit.Breaker, ok bool) {
	dir := os.Getenv(env)
	if dir == "" {
		return nil, nil, false
	}
	s, err := filestore.Open(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	return s, circuit.New(s), true
}

// openedAPI returns a Breaker of s on which a failure opened the circuit
// "api" under p.
func openedAPI(t *testing.T, s *filestore.Store, p circuit.Policy) *circuit.Breaker {
	t.Helper()
	b := circuit.New(s)
	boom := errors.New("boom")
	if err := b.Run(context.Background(), "api", p, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, boom }); !errors.Is(err, boom) {
		t.Fatalf("opening call: %v", err)
	}
	return b
}

// nsField returns the time of field i of line, in Unix ns.
func nsField(t *testing.T, line string, i int) time.Time {
	t.Helper()
	f := strings.Fields(line)
	n, err := strconv.ParseInt(f[i], 10, 64)
	if err != nil {
		t.Fatalf("line %q: %v", line, err)
	}
	return time.Unix(0, n)
}

// TestStoppedAcrossTheDeadline stops a process holding a cached rejection
// (far from its deadline: its timer pending) until after the deadline,
// then resumes it: the probe must come at once, never before the deadline.
func TestStoppedAcrossTheDeadline(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	openedAPI(t, s, rejectionPolicy)
	cmd, lines := startHelper(t, "TestRejectionHelper", envRejectionDir, dir)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "rejected") {
		t.Fatalf("helper: %q %v", lines.Text(), lines.Err())
	}
	until := nsField(t, lines.Text(), 1)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(until.Add(-time.Until(s.Now()))) + 1500*time.Millisecond)
	resumed := s.Now()
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "admitted") {
		t.Fatalf("helper: %q %v", lines.Text(), lines.Err())
	}
	at := nsField(t, lines.Text(), 1)
	t.Logf("deadline %v, resumed %v after it, admitted %v after resuming", until, resumed.Sub(until), at.Sub(resumed))
	if at.Before(until) {
		t.Fatalf("admitted %v before the deadline", until.Sub(at))
	}
	if d := at.Sub(resumed); d > 200*time.Millisecond {
		t.Fatalf("probe admitted %v after resuming, past the deadline", d)
	}
}

// TestClosedByAnotherProcessEndsTheCachedRejection: a process holds a
// cached rejection of a circuit open for a minute; another process clears
// it or holds it closed: the first must be admitted promptly.
func TestClosedByAnotherProcessEndsTheCachedRejection(t *testing.T) {
	for _, how := range []string{"clear", "forceclosed"} {
		t.Run(how, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			s, err := filestore.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			p := rejectionPolicy
			p.Cooldown = time.Minute
			b := openedAPI(t, s, p)
			if err := b.ForceOpen(context.Background(), "api", time.Minute); err != nil {
				t.Fatal(err)
			}
			_, lines := startHelper(t, "TestRejectionHelper", envRejectionDir, dir)
			if !lines.Scan() || !strings.HasPrefix(lines.Text(), "rejected") {
				t.Fatalf("helper: %q %v", lines.Text(), lines.Err())
			}
			time.Sleep(300 * time.Millisecond)
			closed := s.Now()
			switch how {
			case "clear":
				err = b.Clear(context.Background(), "api")
			default:
				err = b.ForceClosed(context.Background(), "api", time.Minute)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !lines.Scan() || !strings.HasPrefix(lines.Text(), "admitted") {
				t.Fatalf("helper: %q %v", lines.Text(), lines.Err())
			}
			if d := nsField(t, lines.Text(), 1).Sub(closed); d > 200*time.Millisecond || d < 0 {
				t.Fatalf("admitted %v after the circuit was closed", d)
			}
		})
	}
}

const envStoppedDir = "CIRCUITGEN_TEST_STOPPED_DIR"

var stoppedPolicy = circuit.Policy{FailureRate: 0.5, MinCalls: 20, Window: 2 * time.Second, Cooldown: time.Minute, ProbeLease: time.Second}

// TestStoppedCounterHelper is TestStoppedCounterKeepsTheWindow's other
// process: it calls the circuit "api" with successes as fast as it can;
// once it finds it was stopped for over a second, it makes one more
// successful call, prints "resumed" and waits to be killed.
func TestStoppedCounterHelper(t *testing.T) {
	_, b, helper := helperBreaker(envStoppedDir)
	if !helper {
		return
	}
	ctx := context.Background()
	ok := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
	last := time.Now()
	for n := 0; ; n++ {
		now := time.Now()
		if now.Sub(last) > time.Second {
			err := b.Run(ctx, "api", stoppedPolicy, ok)
			fmt.Println("resumed", err)
			select {}
		}
		last = now
		if err := b.Run(ctx, "api", stoppedPolicy, ok); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		if n == 100 {
			fmt.Println("ready")
		}
	}
}

// TestStoppedCounterKeepsTheWindow: a process counting successes under the
// rate rule (Window 2s: 200ms buckets) is stopped for over two windows,
// while another process counts 15 failures; the first, resumed, counts a
// success; then 10 more failures: 25 of 26 or so calls in the window
// failed, and the circuit must open. The resumed process may count in the
// bucket it read before the stop (window.Circuit.Clock's reading, kept
// until its alarm rings, or a stop between reading the clock and
// counting): that bucket is two windows old, and the success must be
// dropped, not empty the current cell (CI failed 1 of 3 attempts so). It
// is run 3 times.
func TestStoppedCounterKeepsTheWindow(t *testing.T) {
	for attempt := range 3 {
		if msg := stoppedCounterAttempt(t); msg != "" {
			t.Fatalf("attempt %d: %s", attempt+1, msg)
		}
	}
}

func stoppedCounterAttempt(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cmd, lines := startHelper(t, "TestStoppedCounterHelper", envStoppedDir, dir)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("helper: %q %v", lines.Text(), lines.Err())
	}
	width := stoppedPolicy.Window / driver.WindowBuckets
	// Stop it in the middle of a bucket.
	now := s.Now()
	time.Sleep(width - time.Duration(now.UnixNano()%int64(width)) + width/2)
	stopped := driver.Bucket(s.Now(), stoppedPolicy.Window)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	later := stopped + 2*driver.WindowBuckets // the same cell, two windows on
	time.Sleep(time.Until(time.Unix(0, later*int64(width)).Add(time.Since(s.Now()))) + 10*time.Millisecond)
	if b := driver.Bucket(s.Now(), stoppedPolicy.Window); b != later {
		t.Fatalf("woke in bucket %d, want %d", b, later)
	}
	b := circuit.New(s)
	ctx := context.Background()
	boom := errors.New("boom")
	fail := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, boom }
	for range 15 {
		if err := b.Run(ctx, "api", stoppedPolicy, fail); !errors.Is(err, boom) {
			t.Fatal(err)
		}
	}
	cells, err := s.WindowCells("api", stoppedPolicy.Window)
	if err != nil {
		t.Fatal(err)
	}
	epoch := driver.WindowEpoch(nil)
	if got := cells.Counts(epoch, later); got.Calls != 15 || got.Failures != 15 {
		t.Fatalf("before resuming: %+v", got)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() || lines.Text() != "resumed <nil>" {
		t.Fatalf("helper: %q %v", lines.Text(), lines.Err())
	}
	got := cells.Counts(epoch, later)
	t.Logf("after the resumed process's success: %+v", got)
	for range 10 {
		err := b.Run(ctx, "api", stoppedPolicy, fail)
		var open *circuit.OpenError
		if errors.As(err, &open) {
			break // opened
		}
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
	}
	snap, err := b.Snapshot(ctx, "api")
	if err != nil {
		t.Fatal(err)
	}
	if got.Calls < 15 || got.Failures != 15 || snap.State != circuit.StateOpen {
		return fmt.Sprintf("15 failures, then a success of the process resumed after %d buckets: window %+v, want 15+ calls, 15 failures; "+
			"after 10 more failures the circuit is %v (window %+v)", later-stopped, got, snap.State, cells.Counts(epoch, driver.Bucket(s.Now(), stoppedPolicy.Window)))
	}
	return ""
}
