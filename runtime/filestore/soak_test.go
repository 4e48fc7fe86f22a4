//go:build linux

package filestore

// The crash soak: worker processes (this test binary, re-executed as the
// helper script "soak" of TestHelperProcess) make random Breaker calls on a few
// circuits in one shared directory with the real clock, and the test
// SIGKILLs one of them at a random moment, again and again. Their clock is
// the real one sped up (soakClock), the same in every process, so that
// cooldowns and leases of the shortest policy end within milliseconds. After each kill
// every record decodes strictly, every circuit's lock can be taken, and
// every circuit admits a call once any lease or cooldown a dead worker left
// has run out.
//
//	go test -short ./runtime/filestore/ -run TestCrashSoak     50 kills
//	go test ./runtime/filestore/ -run TestCrashSoak             100 kills
//	go test ./runtime/filestore/ -run TestCrashSoak -soak       1000 kills (make soak)
//
// CIRCUITGEN_SOAK=1 in the environment is the same as -soak, and
// CIRCUITGEN_SOAK_KILLS=n sets the number of kills.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
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
)

var soakFlag = flag.Bool("soak", false, "run the crash soak and the linearizability check at full size")

// Environment of a soak worker.
const (
	envSoakDir   = "CIRCUITGEN_SOAK_DIR"
	envSoakSeed  = "CIRCUITGEN_SOAK_SEED"
	envSoakEpoch = "CIRCUITGEN_SOAK_EPOCH" // soakClock's epoch, in Unix nanoseconds
)

// soakSpeed is how much faster than real time soakClock runs.
const soakSpeed = 200

// soakClock returns the shared soak clock: the real clock, sped up
// soakSpeed times from epoch. Every process computes the same time from the
// server's real clock.
func soakClock(epoch time.Time) func() time.Time {
	return func() time.Time { return epoch.Add(time.Since(epoch) * soakSpeed) }
}

// soakLine prefixes the lines a soak worker writes for the test.
const soakLine = "@@soak "

var soakCircuits = []string{"soak-a", "soak-b", "soak-c"}

// soakPolicy uses the shortest durations a policy allows, so that a worker's
// circuits open, probe and close many times within a soak.
var soakPolicy = circuit.Policy{FailureThreshold: 2, Cooldown: time.Second, ProbeLease: time.Second}

var errSoak = errors.New("soak dependency down")

func soakMode() bool { return *soakFlag || os.Getenv("CIRCUITGEN_SOAK") == "1" }

func init() { helperScripts["soak"] = soakWorker }

// soakWorker makes random calls until it is killed. A StateError or any
// other unexpected error is reported on stdout for the test to fail on.
func soakWorker() error {
	s, err := Open(os.Getenv(envSoakDir))
	if err != nil {
		return err
	}
	seed, _ := strconv.ParseUint(os.Getenv(envSoakSeed), 10, 64)
	rng := rand.New(rand.NewPCG(seed, uint64(os.Getpid())))
	epoch, _ := strconv.ParseInt(os.Getenv(envSoakEpoch), 10, 64)
	b := circuit.New(s, circuit.WithClock(soakClock(time.Unix(0, epoch))))
	ctx := context.Background()
	fmt.Fprintf(os.Stdout, soakLine+"ready\n")
	for {
		name := soakCircuits[rng.IntN(len(soakCircuits))]
		var err error
		switch r := rng.IntN(100); {
		case r < 75:
			o := []circuit.Outcome{circuit.Failure, circuit.Failure, circuit.Success, circuit.Ignored}[rng.IntN(4)]
			pause := time.Duration(rng.IntN(300)) * time.Microsecond
			err = b.Run(ctx, name, soakPolicy, func(context.Context) (circuit.Outcome, error) {
				time.Sleep(pause)
				return o, errSoak
			})
			if errors.Is(err, errSoak) && !errors.As(err, new(*circuit.StateError)) {
				err = nil
			}
		case r < 78:
			// An abandoned ticket: a probe's claim that only its lease ends.
			_, err = b.Allow(ctx, name, soakPolicy)
		case r < 98:
			_, err = b.Snapshot(ctx, name)
		default:
			err = b.Clear(ctx, name)
		}
		if err != nil && !errors.As(err, new(*circuit.OpenError)) {
			fmt.Fprintf(os.Stdout, soakLine+"error %s: %v\n", name, err)
		}
	}
}

// soakChild is a running soak worker.
type soakChild struct {
	cmd    *exec.Cmd
	ready  chan struct{}
	done   chan struct{} // closed when its stdout ends
	mu     sync.Mutex
	errors []string
	stderr strings.Builder
}

func startSoakChild(t *testing.T, dir string, epoch time.Time, seed uint64) *soakChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envRole+"=soak", envSoakDir+"="+dir,
		envSoakSeed+"="+strconv.FormatUint(seed, 10), envSoakEpoch+"="+strconv.FormatInt(epoch.UnixNano(), 10))
	c := &soakChild{cmd: cmd, ready: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = &c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start soak worker: %v", err)
	}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		var once sync.Once
		for sc.Scan() {
			msg, ok := strings.CutPrefix(sc.Text(), soakLine)
			switch {
			case !ok:
			case msg == "ready":
				once.Do(func() { close(c.ready) })
			default:
				c.mu.Lock()
				c.errors = append(c.errors, msg)
				c.mu.Unlock()
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	return c
}

// kill SIGKILLs the worker, reaps it, and returns the errors it reported.
func (c *soakChild) kill(t *testing.T) []string {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	err := c.cmd.Wait()
	<-c.done
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("soak worker %d: Wait = %v, want death by SIGKILL; stderr:\n%s", c.cmd.Process.Pid, err, c.stderr.String())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errors
}

func (c *soakChild) waitReady(t *testing.T) {
	t.Helper()
	select {
	case <-c.ready:
	case <-c.done:
		t.Fatalf("soak worker %d ended before it was ready; stderr:\n%s", c.cmd.Process.Pid, c.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("soak worker %d not ready after 30s", c.cmd.Process.Pid)
	}
}

// soakStats are the figures a soak reports.
type soakStats struct {
	kills, halfOpen, open, temps int
	maxLockWait                  time.Duration
}

func TestCrashSoak(t *testing.T) {
	kills, workers := 100, 3
	switch {
	case soakMode():
		kills = 1000
	case testing.Short():
		kills = 50
	}
	if n, err := strconv.Atoi(os.Getenv("CIRCUITGEN_SOAK_KILLS")); err == nil && n > 0 {
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d workers, %d kills", seed, workers, kills)
	rng := rand.New(rand.NewPCG(seed, 1))
	dir := filepath.Join(t.TempDir(), "state")
	epoch := time.Now()

	ws := make([]*soakChild, workers)
	for i := range ws {
		ws[i] = startSoakChild(t, dir, epoch, rng.Uint64())
	}
	defer func() {
		for _, w := range ws {
			if w != nil {
				_ = w.cmd.Process.Kill()
				_ = w.cmd.Wait()
			}
		}
	}()
	for _, w := range ws {
		w.waitReady(t)
	}

	start := time.Now()
	var st soakStats
	for i := range kills {
		// Let every worker get going, then kill one at a random moment.
		time.Sleep(time.Duration(rng.IntN(8000)) * time.Microsecond)
		v := rng.IntN(workers)
		if errs := ws[v].kill(t); len(errs) > 0 {
			t.Fatalf("kill %d: the worker reported %d errors, first: %s", i, len(errs), errs[0])
		}
		ws[v] = nil
		soakCheck(t, dir, epoch, &st, fmt.Sprintf("kill %d", i))
		st.kills++
		ws[v] = startSoakChild(t, dir, epoch, rng.Uint64())
		ws[v].waitReady(t)
	}
	for i, w := range ws {
		if errs := w.kill(t); len(errs) > 0 {
			t.Fatalf("final kill: the worker reported %d errors, first: %s", len(errs), errs[0])
		}
		ws[i] = nil
	}
	soakCheck(t, dir, epoch, &st, "after the last kill")
	// With no worker left, a write on each circuit sweeps what a killed
	// writer left behind.
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range soakCircuits {
		if err := s.Delete(t.Context(), name); err != nil {
			t.Fatalf("Delete(%s): %v", name, err)
		}
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(temps) != 0 {
		t.Fatalf("temporary files after a write on every circuit: %q", temps)
	}
	elapsed := time.Since(start)
	t.Logf("%d SIGKILLs in %v (%v each): %d times a circuit was half-open after a kill and %d times open, all recovered; "+
		"%d temporary files seen (a killed or a live writer's); longest wait for a lock %v",
		st.kills, elapsed.Round(time.Millisecond), (elapsed / time.Duration(max(st.kills, 1))).Round(time.Microsecond),
		st.halfOpen, st.open, st.temps, st.maxLockWait.Round(time.Microsecond))
}

// soakCheck checks the shared directory after a kill, while the other
// workers go on.
func soakCheck(t *testing.T, dir string, epoch time.Time, st *soakStats, when string) {
	t.Helper()
	ctx := t.Context()
	s, err := Open(dir) // a fresh store: nothing cached
	if err != nil {
		t.Fatal(err)
	}
	// Every record decodes strictly.
	names, err := s.Names(ctx)
	if err != nil {
		t.Fatalf("%s: a record does not decode: %v", when, err)
	}
	if len(names) > len(soakCircuits) {
		t.Fatalf("%s: records of %q, want at most %q", when, names, soakCircuits)
	}
	temps, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
	st.temps += len(temps)

	// A Breaker whose clock is past every lease and cooldown any worker can
	// have recorded: each circuit admits a call, claiming the probe when a
	// dead (or live) worker's claim has expired.
	now := soakClock(epoch)
	future := func() time.Time { return now().Add(soakPolicy.Cooldown + soakPolicy.ProbeLease + time.Second) }
	b := circuit.New(s, circuit.WithClock(future))
	for _, name := range soakCircuits {
		// The lock is free, or freed within a bound by the live workers.
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		t0 := time.Now()
		err := s.change(lctx, name, func(counter) error { return nil })
		cancel()
		if err != nil {
			t.Fatalf("%s: lock of %s: %v", when, name, err)
		}
		st.maxLockWait = max(st.maxLockWait, time.Since(t0))

		snap, err := b.Snapshot(ctx, name)
		if err != nil {
			t.Fatalf("%s: Snapshot(%s): %v", when, name, err)
		}
		switch snap.State {
		case circuit.StateHalfOpen:
			st.halfOpen++
		case circuit.StateOpen:
			st.open++
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var ran bool
		err = b.Run(rctx, name, soakPolicy, func(context.Context) (circuit.Outcome, error) {
			ran = true
			return circuit.Success, nil
		})
		cancel()
		if err != nil || !ran {
			t.Fatalf("%s: %s (was %v) past every deadline: Run = %v, ran = %v; want it admitted", when, name, snap.State, err, ran)
		}
	}
}
