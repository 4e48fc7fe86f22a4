package filestore

// The tests in this file run cooperating processes: the test binary
// re-executes itself with -test.run=^TestHelperProcess$ and an environment
// variable naming the child's role, as the standard library's os/exec tests
// do, and the children share one state directory with the parent. They are
// in package filestore because a crashing writer stops at a named step of
// the write sequence through the unexported stepHook.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/storetest"
)

// Environment of a helper process.
const (
	envRole = "CIRCUITGEN_TEST_HELPER" // "worker" or "writer"
	envDir  = "CIRCUITGEN_TEST_DIR"    // the shared state directory
	envLog  = "CIRCUITGEN_TEST_LOG"    // worker: the file each invocation is appended to
	envStep = "CIRCUITGEN_TEST_STEP"   // writer: the write step to stop at
)

// msgPrefix marks the protocol lines a helper writes to its stdout, so that
// anything else the test binary prints is skipped.
const msgPrefix = "@@ "

const helperCircuit = "inventory-api"

// helperPolicy is the policy of every process in these tests. Time is
// injected, so its durations cost no waiting.
var helperPolicy = circuit.Policy{FailureThreshold: 2, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

var errHelperDown = errors.New("inventory down")

// TestHelperProcess is not a test: it is the body of the helper processes
// the tests below start. Run without envRole it does nothing.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(envRole)
	if role == "" {
		return
	}
	var err error
	switch role {
	case "worker":
		err = helperWorker()
	case "writer":
		err = helperWriter()
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", role, err)
		os.Exit(2)
	}
	os.Exit(0)
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stdout, msgPrefix+format+"\n", args...)
}

// helperWorker runs one call through the shared circuit per command read
// from stdin, "run <unix nanoseconds> <episode>", with the clock fixed at
// the given time. The operation appends "<episode> <pid>" to the log, says
// "ran", and returns Success when the next line, "finish", arrives. After
// each call the worker says "ok", "open" or "err <message>".
func helperWorker() error {
	s, err := Open(os.Getenv(envDir))
	if err != nil {
		return err
	}
	var now time.Time
	b := circuit.New(s, circuit.WithClock(func() time.Time { return now }))
	in := bufio.NewScanner(os.Stdin)
	say("ready")
	for in.Scan() {
		var nanos int64
		var episode int
		if _, err := fmt.Sscanf(in.Text(), "run %d %d", &nanos, &episode); err != nil {
			return fmt.Errorf("command %q: %w", in.Text(), err)
		}
		now = time.Unix(0, nanos).UTC()
		err := b.Run(context.Background(), helperCircuit, helperPolicy, func(context.Context) (circuit.Outcome, error) {
			f, err := os.OpenFile(os.Getenv(envLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				return circuit.Ignored, err
			}
			_, err = fmt.Fprintf(f, "%d %d\n", episode, os.Getpid())
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return circuit.Ignored, err
			}
			say("ran")
			if !in.Scan() || in.Text() != "finish" {
				return circuit.Ignored, errors.New("no finish command")
			}
			return circuit.Success, nil
		})
		var open *circuit.OpenError
		switch {
		case err == nil:
			say("ok")
		case errors.As(err, &open):
			say("open")
		default:
			say("err %v", err)
		}
	}
	return in.Err()
}

// helperWriter replaces the circuit's record with its successor and stops
// for good at the write step named by envStep, after saying "at <step>".
// It says "done" if the write finishes without reaching that step.
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
			say("at %s", step)
			select {} // until killed
		}
	}
	if err := s.Replace(ctx, helperCircuit, cur, successor(cur)); err != nil {
		return err
	}
	say("done")
	return nil
}

// successor returns the next revision of r with one more failure.
func successor(r *circuit.Record) *circuit.Record {
	next := *r
	next.Version++
	next.Failures++
	next.UpdatedAt = next.UpdatedAt.Add(time.Second)
	return &next
}

// child is a running helper process.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *lockedBuffer
	exited bool
}

// lockedBuffer collects a child's stderr for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startChild starts a helper process in role with the extra environment
// env. It is killed, at the latest, when the test ends or after a minute.
func startChild(t *testing.T, role string, env ...string) *child {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), envRole+"="+role), env...)
	c := &child{t: t, cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	var err error
	if c.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewScanner(out)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start helper: %v", err)
	}
	t.Cleanup(func() {
		_ = c.in.Close()
		if !c.exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		cancel()
	})
	return c
}

// recv returns the child's next protocol message.
func (c *child) recv() string {
	c.t.Helper()
	for c.out.Scan() {
		if msg, ok := strings.CutPrefix(c.out.Text(), msgPrefix); ok {
			return msg
		}
	}
	c.t.Fatalf("helper %d: no message (%v); stderr:\n%s", c.cmd.Process.Pid, c.out.Err(), c.stderr)
	return ""
}

func (c *child) expect(want string) {
	c.t.Helper()
	if got := c.recv(); got != want {
		c.t.Fatalf("helper %d said %q, want %q; stderr:\n%s", c.cmd.Process.Pid, got, want, c.stderr)
	}
}

func (c *child) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("helper %d: %v; stderr:\n%s", c.cmd.Process.Pid, err, c.stderr)
	}
}

// kill SIGKILLs the child and reaps it.
func (c *child) kill() {
	c.t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	err := c.cmd.Wait()
	c.exited = true
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		c.t.Fatalf("helper %d: Wait = %v, want death by SIGKILL", c.cmd.Process.Pid, err)
	}
}

// startWorkers starts n workers on dir and waits until each is ready.
func startWorkers(t *testing.T, n int, dir, log string) []*child {
	t.Helper()
	ws := make([]*child, n)
	for i := range ws {
		ws[i] = startChild(t, "worker", envDir+"="+dir, envLog+"="+log)
	}
	for _, w := range ws {
		w.expect("ready")
	}
	return ws
}

// episodeClock is the parent's side of the injected time.
type episodeClock struct{ now time.Time }

func (c *episodeClock) Now() time.Time { return c.now }

var helperBase = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// openShared opens the shared circuit at now with a parent's Breaker and
// returns its generation.
func openShared(t *testing.T, b *circuit.Breaker) uint64 {
	t.Helper()
	for range helperPolicy.FailureThreshold {
		err := b.Run(t.Context(), helperCircuit, helperPolicy, func(context.Context) (circuit.Outcome, error) {
			return circuit.Failure, errHelperDown
		})
		if !errors.Is(err, errHelperDown) {
			t.Fatalf("opening the circuit: Run = %v", err)
		}
	}
	snap, err := b.Snapshot(t.Context(), helperCircuit)
	if err != nil || snap.State != circuit.StateOpen {
		t.Fatalf("after %d failures: %+v, %v; want open", helperPolicy.FailureThreshold, snap, err)
	}
	return snap.Generation
}

func wantClosed(t *testing.T, b *circuit.Breaker, gen uint64) {
	t.Helper()
	snap, err := b.Snapshot(t.Context(), helperCircuit)
	if err != nil || snap.State != circuit.StateClosed || snap.Generation != gen {
		t.Fatalf("Snapshot = %+v, %v; want closed in generation %d", snap, err, gen)
	}
}

// logLines returns the lines of the workers' log for episode.
func logLines(t *testing.T, log string, episode int) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(l, strconv.Itoa(episode)+" ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// dispatch sends "run" at time at to every worker and returns which of them
// ran the operation (and wait for "finish") and how many were rejected.
func dispatch(t *testing.T, ws []*child, at time.Time, episode int) (ran []*child, rejected int) {
	t.Helper()
	cmd := fmt.Sprintf("run %d %d", at.UnixNano(), episode)
	for _, w := range ws {
		w.send(cmd)
	}
	for _, w := range ws {
		switch msg := w.recv(); msg {
		case "ran":
			ran = append(ran, w)
		case "open":
			rejected++
		default:
			t.Errorf("helper %d: %q, want \"ran\" or \"open\"", w.cmd.Process.Pid, msg)
		}
	}
	return ran, rejected
}

// finish lets every running operation return Success.
func finish(t *testing.T, ran []*child) {
	t.Helper()
	for _, w := range ran {
		w.send("finish")
		w.expect("ok")
	}
}

func TestProcessesRaceForOneProbe(t *testing.T) {
	const workers, episodes = 8, 20
	dir := filepath.Join(t.TempDir(), "state")
	log := filepath.Join(t.TempDir(), "ops.log")
	ws := startWorkers(t, workers, dir, log)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	clk := &episodeClock{}
	b := circuit.New(s, circuit.WithClock(clk.Now))

	for ep := range episodes {
		clk.now = helperBase.Add(time.Duration(ep) * time.Hour)
		gen := openShared(t, b)
		// The workers' clock is past the cooldown; the probe's operation
		// holds until every other worker has answered, so none of them can
		// find the circuit closed again.
		ran, rejected := dispatch(t, ws, clk.now.Add(helperPolicy.Cooldown+time.Second), ep)
		if len(ran) != 1 || rejected != workers-1 {
			t.Fatalf("episode %d: %d operations ran and %d calls got OpenError; want 1 and %d", ep, len(ran), rejected, workers-1)
		}
		finish(t, ran)
		if lines := logLines(t, log, ep); len(lines) != 1 {
			t.Fatalf("episode %d: the operation ran %d times: %q", ep, len(lines), lines)
		}
		wantClosed(t, b, gen+1)
	}
}

func TestProbeKilledMidCall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	log := filepath.Join(t.TempDir(), "ops.log")
	ws := startWorkers(t, 5, dir, log)
	victim, others := ws[0], ws[1:]
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	clk := &episodeClock{now: helperBase}
	b := circuit.New(s, circuit.WithClock(clk.Now))
	gen := openShared(t, b)

	claimed := helperBase.Add(helperPolicy.Cooldown + time.Second)
	victim.send(fmt.Sprintf("run %d 0", claimed.UnixNano()))
	victim.expect("ran")
	victim.kill()

	// Until the dead probe's lease expires, everyone is rejected.
	for _, at := range []time.Time{claimed, claimed.Add(helperPolicy.ProbeLease / 2), claimed.Add(helperPolicy.ProbeLease - time.Millisecond)} {
		ran, rejected := dispatch(t, others, at, 1)
		if len(ran) != 0 || rejected != len(others) {
			finish(t, ran)
			t.Fatalf("%v into the dead probe's lease: %d ran, %d rejected; want all rejected", at.Sub(claimed), len(ran), rejected)
		}
	}
	snap, err := b.Snapshot(t.Context(), helperCircuit)
	if err != nil || snap.State != circuit.StateHalfOpen || !snap.LeaseUntil.Equal(claimed.Add(helperPolicy.ProbeLease)) {
		t.Fatalf("Snapshot = %+v, %v; want half_open leased until %v", snap, err, claimed.Add(helperPolicy.ProbeLease))
	}

	// Then exactly one caller claims the probe anew and recovers the circuit.
	ran, rejected := dispatch(t, others, claimed.Add(helperPolicy.ProbeLease), 2)
	if len(ran) != 1 || rejected != len(others)-1 {
		t.Fatalf("after the lease: %d ran, %d rejected; want 1 and %d", len(ran), rejected, len(others)-1)
	}
	finish(t, ran)
	wantClosed(t, b, gen+1)
	if n := len(logLines(t, log, 0)) + len(logLines(t, log, 1)) + len(logLines(t, log, 2)); n != 2 {
		t.Fatalf("the operation ran %d times, want twice (the killed probe and its successor)", n)
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
			old := &circuit.Record{
				Name: helperCircuit, State: circuit.StateClosed, Failures: 1, Generation: 1,
				Incarnation: "0123456789abcdef0123456789abcdef", Version: 1, UpdatedAt: helperBase,
			}
			if err := parent.Replace(ctx, helperCircuit, nil, old); err != nil {
				t.Fatal(err)
			}
			if got, _, err := parent.Load(ctx, helperCircuit); err != nil || got.Version != 1 {
				t.Fatalf("parent Load = %+v, %v", got, err) // the parent's copy is now warm
			}

			w := startChild(t, "writer", envDir+"="+dir, envStep+"="+tt.name)
			w.expect("at " + tt.name)
			w.kill()

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

// TestConformance runs the storetest suite. Its Corrupt hook writes the
// corrupt bytes the way a writer in another process would (through a second
// Store, stopped before its rename to swap the temporary file's contents),
// so that the store under test learns of the change as it learns of every
// change: a store trusts its decoded copy while no writer reports a change.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Config{
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
