// Package storeprocess checks a shared store's breaker behaviour across real
// processes: re-executions of the test binary race for one half-open probe,
// one of them is killed while it holds the probe, and the policy rules that
// span processes (a shared failure-rate window, probe runs, growing
// cooldowns) hold. A store's test calls Processes with a ProcessConfig that
// says how a helper process opens the same store, and calls HelperProcess
// from its TestHelperProcess.
package storeprocess

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// circuitName is the circuit every process test uses.
const circuitName = "storetest-circuit"

// ProcessConfig describes how the processes of Processes share the store
// under test.
type ProcessConfig struct {
	// Env makes a new, empty store that several processes can share (a
	// directory, a key prefix, a database or schema) and returns the
	// environment, as "KEY=value" entries, under which Open opens it.
	// It is called once per subtest of Processes, in the test process
	// only; cleanup belongs in t.Cleanup. It is required by Processes.
	Env func(t *testing.T) []string

	// Open opens the store that the environment from Env names, reading
	// it with os.Getenv. It is called in the test process, where Processes
	// has set that environment with t.Setenv, and in every helper process,
	// which inherits it. Cleanup belongs in t.Cleanup. It is required.
	Open func(t *testing.T) driver.Store

	// Propagation is how long a change made through one process's store
	// may take to reach a Breaker in another: 0 for a store that reads its
	// backend on every call, the invalidation delay for one that keeps
	// local copies. After each change it makes itself, Processes waits this
	// long before the helper processes call.
	Propagation time.Duration
}

// Processes checks, with real processes, that Breakers in different
// processes share one circuit through the store that cfg describes:
//
//   - ProbeRace: in each of several episodes the circuit is open with its
//     cooldown over, and 8 helper processes call it at once. Exactly one
//     runs its operation (the half-open probe); the others get a
//     *circuit.OpenError in the half-open state, and the probe's success
//     leaves the circuit closed in the next generation.
//   - SharedWindow, CloseAfter, GrowingCooldown: the policies across
//     processes (policyprocess.go);
//   - CountWindow, ForcedClosed, ObserveOnly: the modes across processes
//     (modesprocess.go);
//   - KilledProbe: a helper process that holds the probe is killed with
//     SIGKILL in the middle of its call. Until the probe's lease ends (one
//     second), every call of the other helpers gets a *circuit.OpenError;
//     from its end on, exactly one of them claims the probe anew, and its
//     success closes the circuit.
//
// The helper processes re-execute the test binary with
// -test.run=^TestHelperProcess$, so the package under test must have a
// TestHelperProcess that calls HelperProcess. Their time is the store's
// (the time its Load returns, else its driver.Clock, else the wall clock),
// as in production; the checks take about a second and a half.
//
// Processes sets environment variables with t.Setenv, so neither t nor any
// of its ancestors may have called t.Parallel.
func Processes(t *testing.T, cfg ProcessConfig) {
	t.Helper()
	if cfg.Env == nil || cfg.Open == nil {
		t.Fatal("storeprocess: ProcessConfig.Env or ProcessConfig.Open is nil")
	}
	switch runtime.GOOS {
	case "js", "wasip1", "ios":
		t.Skipf("storeprocess: no subprocesses on %s", runtime.GOOS)
	}
	t.Run("ProbeRace", func(t *testing.T) { testProbeRace(t, cfg) })
	t.Run("KilledProbe", func(t *testing.T) { testKilledProbe(t, cfg) })
	t.Run("SharedWindow", func(t *testing.T) { testSharedWindow(t, cfg) })
	t.Run("CloseAfter", func(t *testing.T) { testCloseAfter(t, cfg) })
	t.Run("GrowingCooldown", func(t *testing.T) { testGrowingCooldown(t, cfg) })
	t.Run("CountWindow", func(t *testing.T) { testCountWindow(t, cfg) })
	t.Run("ForcedClosed", func(t *testing.T) { testForcedClosed(t, cfg) })
	t.Run("ObserveOnly", func(t *testing.T) { testObserveOnly(t, cfg) })
}

// HelperProcess is the body of the helper processes that Processes starts.
// The package whose tests call Processes calls it from its own
// TestHelperProcess, the os/exec test pattern:
//
//	func TestHelperProcess(t *testing.T) {
//		storeprocess.HelperProcess(t, processConfig)
//	}
//
// Outside a helper process it returns at once, so that TestHelperProcess
// passes as an ordinary test. In a helper process it opens the store with
// cfg.Open and runs the calls the test process sends it until its standard
// input ends. Only cfg.Open is used.
func HelperProcess(t *testing.T, cfg ProcessConfig) {
	if os.Getenv(helperEnv) == "" {
		return
	}
	if cfg.Open == nil {
		t.Fatal("storeprocess: ProcessConfig.Open is nil")
	}
	if err := helperWorker(t, cfg.Open(t)); err != nil {
		t.Fatalf("storeprocess helper process: %v", err)
	}
}

// helperEnv marks a helper process of Processes.
const helperEnv = "CIRCUITGEN_STORETEST_HELPER"

// msgPrefix marks the protocol lines a helper process writes to its stdout;
// anything else the test binary prints is kept for failure messages.
const msgPrefix = "@@storetest "

// Helpers and rounds of the multi-process checks. killLease is the probe
// lease of the killed probe: the time KilledProbe waits.
const (
	raceHelpers  = 8
	raceEpisodes = 20
	raceLease    = time.Minute
	killHelpers  = 5
	killLease    = time.Second
	killPoll     = 50 * time.Millisecond
)

func say(format string, args ...any) {
	fmt.Fprintf(os.Stdout, msgPrefix+format+"\n", args...)
}

// helperWorker runs one call through the shared circuit for each command
// read from stdin, "run <probe lease in nanoseconds> [policy]" or "call
// <probe lease> [policy]" (policyCommand reads the rest). The operation of
// run says "ran" and returns Success once the next line, "finish", arrives;
// that of call returns the command's outcome at once. After each call it
// says "ok" ("ok would-reject <state>" when an observe-only circuit ran a
// call it would have rejected), "open <state>" for a *circuit.OpenError
// (call adds its Until in Unix nanoseconds), or "err <error>".
func helperWorker(t *testing.T, s driver.Store) error {
	var heard heardRejection
	b := circuit.New(s, circuit.WithObserver(&heard))
	ctx := t.Context()
	if _, err := b.Snapshot(ctx, circuitName); err != nil { // connect before the race
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	say("ready")
	for in.Scan() {
		verb, args, _ := strings.Cut(in.Text(), " ")
		lease, rest, _ := strings.Cut(args, " ")
		n, err := strconv.ParseInt(lease, 10, 64)
		if err != nil || verb != "run" && verb != "call" {
			return fmt.Errorf("command %q: want run or call, then a lease in nanoseconds", in.Text())
		}
		p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Duration(n)}
		var outcome circuit.Outcome
		if p, outcome, err = policyCommand(p, rest); err != nil {
			return fmt.Errorf("command %q: %w", in.Text(), err)
		}
		heard.e = nil
		err = b.Run(ctx, circuitName, p, func(context.Context) (circuit.Outcome, error) {
			if verb == "call" {
				return outcome, nil
			}
			say("ran")
			if !in.Scan() || in.Text() != "finish" {
				return circuit.Ignored, errors.New("no finish command")
			}
			return circuit.Success, nil
		})
		var open *circuit.OpenError
		switch {
		case err == nil && heard.e != nil:
			say("ok would-reject %s", heard.e.State)
		case err == nil:
			say("ok")
		case errors.As(err, &open) && verb == "call":
			say("open %s %d", open.State, open.Until.UnixNano())
		case errors.As(err, &open):
			say("open %s", open.State)
		default:
			say("err %v", err)
		}
	}
	return in.Err()
}

// heardRejection is a CallObserver that keeps the last observe-only
// rejection it heard; a helper makes one call at a time.
type heardRejection struct{ e *circuit.OpenError }

var _ circuit.Observer = (*heardRejection)(nil)

func (h *heardRejection) ObserveTransition(circuit.Transition)                                   {}
func (h *heardRejection) ObserveTransitionContext(context.Context, circuit.Transition)           {}
func (h *heardRejection) ObserveOutcome(context.Context, string, circuit.Outcome, time.Duration) {}
func (h *heardRejection) ObserveRejection(_ context.Context, e *circuit.OpenError) {
	if e.ObserveOnly {
		h.e = e
	}
}

func testProbeRace(t *testing.T, cfg ProcessConfig) {
	s, hs := shareStore(t, cfg, raceHelpers)
	for ep := range raceEpisodes {
		opened := openPast(t, s)
		time.Sleep(cfg.Propagation)
		// The probe's operation holds until every other helper has
		// answered, and its lease outlasts the episode, so that no helper
		// can find the circuit closed again or the probe's claim expired.
		ran, rejected := dispatch(t, hs, raceLease)
		if t.Failed() {
			t.FailNow()
		}
		if len(ran) != 1 || rejected != len(hs)-1 {
			t.Fatalf("episode %d: %d helper processes ran the operation and %d got OpenError (half_open); want 1 and %d",
				ep, len(ran), rejected, len(hs)-1)
		}
		finish(t, ran)
		wantClosed(t, s, opened.Generation+1)
	}
}

func testKilledProbe(t *testing.T, cfg ProcessConfig) {
	s, hs := shareStore(t, cfg, killHelpers)
	victim, others := hs[0], hs[1:]
	opened := openPast(t, s)
	time.Sleep(cfg.Propagation)
	victim.send(runCommand(killLease))
	victim.expect("ran")
	victim.kill()

	dead, _ := loadShared(t, s)
	if dead == nil || dead.State != circuit.StateHalfOpen || dead.Generation != opened.Generation {
		t.Fatalf("after the probe's process was killed: %+v, want half_open in generation %d", dead, opened.Generation)
	}
	leaseEnd := dead.LeaseUntil

	// Rounds of calls until one runs: every round that ends before the
	// dead probe's lease does is rejected, and a round that begins after
	// it must admit exactly one new probe.
	for rounds := 0; ; rounds++ {
		_, began := loadShared(t, s)
		ran, rejected := dispatch(t, others, killLease)
		if t.Failed() {
			t.FailNow()
		}
		if len(ran) == 0 {
			if !began.Before(leaseEnd) {
				t.Fatalf("calls at %v, when the dead probe's lease had ended at %v, were all rejected", began, leaseEnd)
			}
			time.Sleep(killPoll)
			continue
		}
		if len(ran) != 1 || rejected != len(others)-1 {
			t.Fatalf("%d helper processes ran the operation and %d got OpenError (half_open); want 1 and %d", len(ran), rejected, len(others)-1)
		}
		probe, _ := loadShared(t, s)
		if probe == nil || probe.State != circuit.StateHalfOpen || probe.ProbeToken == dead.ProbeToken {
			t.Fatalf("while the new probe runs: %+v, want half_open with a new claim", probe)
		}
		if claimed := probe.LeaseUntil.Add(-killLease); claimed.Before(leaseEnd) {
			t.Fatalf("a new probe was claimed at %v, before the dead probe's lease ended at %v", claimed, leaseEnd)
		}
		if rounds == 0 {
			t.Fatalf("the dead probe's lease (%v) ended before the first round of calls: the store is too slow for this check", killLease)
		}
		finish(t, ran)
		wantClosed(t, s, opened.Generation+1)
		t.Logf("%d rounds of %d calls rejected during the dead probe's lease, then one new probe", rounds, len(others))
		return
	}
}

// shareStore makes a store with cfg.Env, opens it in this process and
// starts n helper processes on it, ready for commands.
func shareStore(t *testing.T, cfg ProcessConfig, n int) (driver.Store, []*helper) {
	t.Helper()
	for _, kv := range cfg.Env(t) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			t.Fatalf("storeprocess: ProcessConfig.Env returned %q, want KEY=value", kv)
		}
		t.Setenv(k, v)
	}
	s := cfg.Open(t)
	hs := make([]*helper, n)
	for i := range hs {
		hs[i] = startHelper(t)
	}
	for _, h := range hs {
		h.expect("ready")
	}
	return s, hs
}

// loadShared loads the shared circuit's record and reads the store's
// clock, the clock the helpers' Breakers decide by.
func loadShared(t *testing.T, s driver.Store) (*driver.Record, time.Time) {
	t.Helper()
	rec, now, err := s.Load(t.Context(), circuitName)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if now.IsZero() {
		if c, ok := s.(driver.Clock); ok {
			now = c.Now()
		} else {
			now = time.Now()
		}
	}
	return rec, now
}

// stateOf returns rec's state; no record is closed: a circuit has none
// until an outcome changes something.
func stateOf(rec *driver.Record) driver.State {
	if rec == nil {
		return driver.StateClosed
	}
	return rec.State
}

// openPast stores the shared circuit as open with a cooldown that ended a
// second ago by the store's clock, through the store's own API and the
// circuit package's state machine, and returns that record.
func openPast(t *testing.T, s driver.Store) *driver.Record {
	t.Helper()
	cur, now := loadShared(t, s)
	now = now.UTC().Truncate(time.Millisecond)
	p := machine.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second}
	g := machine.First // no record: the first failure creates it
	if cur != nil {
		if cur.State != circuit.StateClosed {
			t.Fatalf("before opening the circuit: %+v, want closed", cur)
		}
		g = machine.Grant{Incarnation: cur.Incarnation, Generation: cur.Generation}
	}
	next := machine.Settle(cur, circuitName, &g, machine.Failure, &p, machine.At(now.Add(-p.Cooldown-time.Second)), driver.Counts{})
	if next == nil || next.State != circuit.StateOpen {
		t.Fatalf("a failure did not open %+v: %+v", cur, next)
	}
	mustReplace(t, s, cur, next)
	return next
}

func wantClosed(t *testing.T, s driver.Store, gen uint64) {
	t.Helper()
	rec, _ := loadShared(t, s)
	if rec == nil || rec.State != circuit.StateClosed || rec.Generation != gen {
		t.Fatalf("after the probe's success: %+v, want closed in generation %d", rec, gen)
	}
}

func runCommand(lease time.Duration) string { return "run " + strconv.FormatInt(int64(lease), 10) }

// dispatch has every helper in hs call the circuit under a policy with
// the given probe lease, and returns the helpers that run the operation
// (now waiting for "finish") and how many were rejected as half-open.
func dispatch(t *testing.T, hs []*helper, lease time.Duration) (ran []*helper, rejected int) {
	t.Helper()
	for _, h := range hs {
		h.send(runCommand(lease))
	}
	for _, h := range hs {
		switch msg := h.recv(); msg {
		case "ran":
			ran = append(ran, h)
		case "open " + circuit.StateHalfOpen.String():
			rejected++
		default:
			t.Errorf("helper process %d said %q, want \"ran\" or \"open half_open\"%s", h.pid(), msg, h.output())
		}
	}
	return ran, rejected
}

// finish lets every running operation return Success.
func finish(t *testing.T, ran []*helper) {
	t.Helper()
	for _, h := range ran {
		h.send("finish")
		h.expect("ok")
	}
}

// helper is a running helper process.
type helper struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	log    *lockedBuffer // its stderr and stdout other than messages
	exited bool
}

// lockedBuffer collects a helper's output for failure messages.
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

// startHelper starts a helper process with this process's environment. It
// is killed, at the latest, when the test ends or after two minutes.
func startHelper(t *testing.T) *helper {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	h := &helper{t: t, cmd: cmd, log: &lockedBuffer{}}
	cmd.Stderr = h.log
	var err error
	if h.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h.out = bufio.NewScanner(out)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start helper process: %v", err)
	}
	t.Cleanup(func() {
		_ = h.in.Close()
		if !h.exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		cancel()
	})
	return h
}

func (h *helper) pid() int { return h.cmd.Process.Pid }

// output returns what the helper printed besides messages, for a failure.
func (h *helper) output() string {
	if s := h.log.String(); s != "" {
		return "; its output:\n" + s
	}
	return ""
}

// recv returns the helper's next message.
func (h *helper) recv() string {
	h.t.Helper()
	for h.out.Scan() {
		line := h.out.Text()
		if msg, ok := strings.CutPrefix(line, msgPrefix); ok {
			return msg
		}
		fmt.Fprintln(h.log, line)
	}
	h.t.Fatalf("helper process %d ended without a message (%v); does the package's TestHelperProcess call storeprocess.HelperProcess?%s",
		h.pid(), h.out.Err(), h.output())
	return ""
}

func (h *helper) expect(want string) {
	h.t.Helper()
	if got := h.recv(); got != want {
		h.t.Fatalf("helper process %d said %q, want %q%s", h.pid(), got, want, h.output())
	}
}

func (h *helper) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("helper process %d: %v%s", h.pid(), err, h.output())
	}
}

// kill kills the helper with SIGKILL (on Windows, TerminateProcess) and
// reaps it.
func (h *helper) kill() {
	h.t.Helper()
	if err := h.cmd.Process.Kill(); err != nil {
		h.t.Fatal(err)
	}
	err := h.cmd.Wait()
	h.exited = true
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Exited() {
		h.t.Fatalf("helper process %d: Wait = %v, want death by a signal%s", h.pid(), err, h.output())
	}
}

func mustReplace(t *testing.T, s driver.Store, prev, next *driver.Record) {
	t.Helper()
	if err := s.Replace(t.Context(), circuitName, prev, next); err != nil {
		t.Fatalf("Replace of the shared circuit: %v", err)
	}
}
