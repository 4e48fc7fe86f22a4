//go:build linux

package filestore

// The nemesis worker: this test binary, re-executed with
// -test.run=^TestHelperProcessNemesis$ (as an unprivileged user when the
// test runs as root), makes guarded calls on the nemesis circuits and
// appends what happened to its history file (nemesis_check_test.go has the
// format). It takes commands on its standard input:
//
//	go            open the store (open) and start the calls: nemesisGoroutines loops of random calls
//	limit N       set its RLIMIT_NOFILE soft limit to N (the nemesis's fd exhaustion)
//	limit restore set it back
//	stop          finish the calls in flight, then say "stopped"
//	final call    one call (Allow, then Done(Success)) on each circuit, and another where the first
//	              found the index damaged and replaced it (failing closed), then say "called"
//	final snap    say "snap <circuit> <state> <gen> <failures> <exists> <error>" for each circuit
//
// and exits when its standard input ends.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// Environment of a nemesis worker.
const (
	envNemRole = "CIRCUITGEN_NEMESIS_HELPER" // "worker"
	envNemDir  = "CIRCUITGEN_NEMESIS_DIR"
	envNemHist = "CIRCUITGEN_NEMESIS_HISTORY" // the history file
	envNemID   = "CIRCUITGEN_NEMESIS_ID"
	envNemSeed = "CIRCUITGEN_NEMESIS_SEED"
)

const nemLine = "@@nemesis "

var nemCircuits = []string{"nem-a", "nem-b", "nem-c"}

// nemPolicy has the shortest cooldown and lease a policy allows, so that
// the circuits open, probe and close many times a run, and a slow
// operation (nemSlowOp) outlives its probe's lease.
var nemPolicy = circuit.Policy{FailureThreshold: 2, Cooldown: time.Second, ProbeLease: time.Second}

// nemesisGoroutines is how many loops of calls a worker runs at once; one
// more, a slow reader (nemSlowPause between calls, loop), runs on a second
// Store of the same directory, as another process would: its copies of
// records see few uses a second, so a bound on their staleness counted in
// uses, not time, shows.
const nemesisGoroutines = 3

// nemSlowPause is the least pause of the slow loop between calls.
const nemSlowPause = 200 * time.Millisecond

// nemCallTimeout bounds each call's wait for a lock (a stopped worker may
// hold one for seconds).
const nemCallTimeout = 2 * time.Second

var errNemesisOp = errors.New("nemesis dependency failed")

// bootNanos reads the boot clock for a history; it cannot fail on Linux.
func bootNanos() int64 {
	d, err := bootClock()
	if err != nil {
		panic(err)
	}
	return int64(d)
}

// TestHelperProcessNemesis is not a test: it is the body of a nemesis
// worker. Run without envNemRole it does nothing.
func TestHelperProcessNemesis(t *testing.T) {
	if os.Getenv(envNemRole) != "worker" {
		return
	}
	if err := nemesisWorker(); err != nil {
		fmt.Fprintf(os.Stderr, "nemesis worker: %v\n", err)
		os.Exit(3)
	}
	os.Exit(0)
}

// nemHistory appends lines to a worker's history file, one write each.
type nemHistory struct {
	mu  sync.Mutex
	f   *os.File
	err error
}

// failed returns the first error writing the history.
func (h *nemHistory) failed() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

func (h *nemHistory) add(format string, args ...any) {
	line := fmt.Sprintf(format+"\n", args...)
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := h.f.WriteString(line); err != nil && h.err == nil {
		h.err = err
	}
}

// resultOf classifies an error for a history.
func resultOf(err error) string {
	var open *circuit.OpenError
	var se *circuit.StateError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &open):
		return "open:" + open.State.String()
	case errors.As(err, &se):
		r := "state:" + se.Op
		if se.Ran {
			r += ":ran"
		}
		if se.Corrupt() {
			r += ":corrupt"
		}
		return r
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "ctx"
	}
	return "other"
}

func quoteErr(err error) string {
	if err == nil {
		return `""`
	}
	return strconv.Quote(err.Error())
}

// nemWorker is a worker's state: its store, its history, its op counter.
type nemWorker struct {
	s    *Store // once opened (open)
	h    *nemHistory
	id   string
	mu   sync.Mutex
	seq  int
	orig unix.Rlimit
	slow *nemWorker // the slow loop's: another Store, ops named <id>s.<n>
}

func (w *nemWorker) nextOp() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	return w.id + "." + strconv.Itoa(w.seq)
}

// breaker returns a Breaker whose Observer records each transition as the
// op *cur's.
func (w *nemWorker) breaker(cur *string) *circuit.Breaker {
	return circuit.New(w.s, circuit.WithObserver(circuit.ObserverFunc(func(tr circuit.Transition) {
		w.h.add("T %s %s %d %d %d %d %d %d", *cur, tr.Name, tr.From, tr.To, tr.Generation, tr.Failures, tr.At.UnixNano(), bootNanos())
	})))
}

// now reads the store's clock for a history, in Unix ns; 0 for the slow
// reader, which must not: reading the store's clock (once a second) checks
// the change index, which would refresh the reader's copies for it.
func (w *nemWorker) now() int64 {
	if w.slow == nil {
		return 0
	}
	return w.s.Now().UnixNano()
}

// call makes one guarded call: Allow, the operation, Done. It returns
// Allow's error.
func (w *nemWorker) call(b *circuit.Breaker, cur *string, name string, o circuit.Outcome, pause time.Duration) error {
	op := w.nextOp()
	*cur = op
	ctx, cancel := context.WithTimeout(context.Background(), nemCallTimeout)
	defer cancel()
	w.h.add("C %s allow %s %d", op, name, bootNanos())
	tk, err := b.Allow(ctx, name, nemPolicy)
	if err != nil {
		w.h.add("R %s %d %s %s", op, bootNanos(), resultOf(err), quoteErr(err))
		return err
	}
	probe := 0
	if tk.Probe() {
		probe = 1
	}
	w.h.add("A %s %d %d %d", op, bootNanos(), probe, w.now())
	time.Sleep(pause)
	w.h.add("E %s %d %d", op, bootNanos(), o)
	err = tk.Done(o)
	w.h.add("D %s %d %s %s", op, bootNanos(), resultOf(err), quoteErr(err))
	return nil
}

// run makes one guarded call with Run. Run does not tell whether its call
// was the probe: the history says so when the Observer heard it claim one,
// and otherwise that it does not know (2).
func (w *nemWorker) run(b *circuit.Breaker, cur *string, name string, o circuit.Outcome, pause time.Duration) {
	op := w.nextOp()
	*cur = op
	ctx, cancel := context.WithTimeout(context.Background(), nemCallTimeout)
	defer cancel()
	w.h.add("C %s allow %s %d", op, name, bootNanos())
	ran := false
	err := b.Run(ctx, name, nemPolicy, func(context.Context) (circuit.Outcome, error) {
		ran = true
		w.h.add("A %s %d 2 %d", op, bootNanos(), w.now())
		time.Sleep(pause)
		w.h.add("E %s %d %d", op, bootNanos(), o)
		return o, errNemesisOp
	})
	if errors.Is(err, errNemesisOp) && !errors.As(err, new(*circuit.StateError)) {
		err = nil // the operation's own error: it ran and settled
	}
	line := "R"
	if ran {
		line = "D"
	}
	w.h.add("%s %s %d %s %s", line, op, bootNanos(), resultOf(err), quoteErr(err))
}

func (w *nemWorker) snapshot(b *circuit.Breaker, cur *string, name string) (circuit.Snapshot, error) {
	op := w.nextOp()
	*cur = op
	ctx, cancel := context.WithTimeout(context.Background(), nemCallTimeout)
	defer cancel()
	w.h.add("C %s snap %s %d", op, name, bootNanos())
	snap, err := b.Snapshot(ctx, name)
	if err != nil {
		w.h.add("R %s %d %s %s", op, bootNanos(), resultOf(err), quoteErr(err))
		return snap, err
	}
	exists := 0
	if snap.Exists {
		exists = 1
	}
	w.h.add("N %s %d %d %d %d %d", op, bootNanos(), snap.State, snap.Generation, snap.Failures, exists)
	return snap, nil
}

func (w *nemWorker) clear(b *circuit.Breaker, cur *string, name string) {
	op := w.nextOp()
	*cur = op
	ctx, cancel := context.WithTimeout(context.Background(), nemCallTimeout)
	defer cancel()
	w.h.add("C %s clear %s %d", op, name, bootNanos())
	err := b.Clear(ctx, name)
	w.h.add("D %s %d %s %s", op, bootNanos(), resultOf(err), quoteErr(err))
}

// loop makes random calls until stop is closed, pausing at least gap
// between them: mostly guarded calls (Run, or Allow and Done) whose
// operation fails, succeeds or is ignored at random, a few of them slower
// than a probe's lease; snapshots; now and then a Clear. A reader's
// operations are all ignored and it clears nothing: it writes only to
// claim a probe, so that nothing but the store's own check of the change
// index refreshes its copies.
func (w *nemWorker) loop(seed uint64, gap time.Duration, reader bool, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var cur string
	b := w.breaker(&cur)
	for {
		select {
		case <-stop:
			return
		default:
		}
		name := nemCircuits[rng.IntN(len(nemCircuits))]
		switch r := rng.IntN(200); {
		case r < 168:
			o := []circuit.Outcome{circuit.Failure, circuit.Failure, circuit.Success, circuit.Success, circuit.Success, circuit.Success, circuit.Success, circuit.Ignored}[rng.IntN(8)]
			if reader {
				o = circuit.Ignored
			}
			var pause time.Duration
			switch q := rng.IntN(100); {
			case q < 75:
				pause = time.Duration(rng.IntN(20)) * time.Millisecond
			case q < 95:
				pause = time.Duration(20+rng.IntN(300)) * time.Millisecond
			default:
				pause = time.Duration(1000+rng.IntN(600)) * time.Millisecond // outlives the lease
			}
			if rng.IntN(2) == 0 {
				_ = w.call(b, &cur, name, o, pause)
			} else {
				w.run(b, &cur, name, o, pause)
			}
		case r < 199 || reader:
			_, _ = w.snapshot(b, &cur, name)
		default:
			w.clear(b, &cur, name)
		}
		time.Sleep(gap + time.Duration(rng.Int64N(int64(max(gap, 30*time.Millisecond)))))
	}
}

// open opens the store, the first time the worker needs it. A directory
// Open refuses (a *DirError: the nemesis made it read-only, say) is noted
// in the history and tried again every 20ms, as a service restarted by its
// supervisor would; any other error ends the worker.
func (w *nemWorker) open() error {
	for w.slow.s == nil {
		s, err := Open(os.Getenv(envNemDir))
		var de *DirError
		switch {
		case err == nil && w.s == nil:
			w.s = s
		case err == nil:
			w.slow.s = s
		case errors.As(err, &de):
			w.h.add("O %d %s", bootNanos(), quoteErr(err))
			time.Sleep(20 * time.Millisecond)
		default:
			return fmt.Errorf("open: %w", err)
		}
	}
	return nil
}

// setLimit sets the soft RLIMIT_NOFILE; "restore" puts back the limit the
// worker started with.
func (w *nemWorker) setLimit(arg string) error {
	lim := w.orig
	if arg != "restore" {
		n, err := strconv.ParseUint(arg, 10, 64)
		if err != nil {
			return err
		}
		lim.Cur = n
	}
	return unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
}

func nemesisWorker() error {
	// The history file first: opening it sets up the runtime's poller, which
	// must not be the first thing to need a descriptor under the nemesis's
	// fd limit.
	f, err := os.OpenFile(os.Getenv(envNemHist), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	w := &nemWorker{h: &nemHistory{f: f}, id: os.Getenv(envNemID)}
	w.slow = &nemWorker{h: w.h, id: w.id + "s"}
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &w.orig); err != nil {
		return err
	}
	seed, _ := strconv.ParseUint(os.Getenv(envNemSeed), 10, 64)
	say := func(format string, args ...any) { fmt.Fprintf(os.Stdout, nemLine+format+"\n", args...) }

	stop := make(chan struct{})
	var loops sync.WaitGroup
	stopLoops := sync.OnceFunc(func() { close(stop); loops.Wait() })
	// Told to exit (its input closed), a worker stops its loops before it
	// closes its history: a call made after the history is closed would
	// change the circuits unseen by the checker.
	defer stopLoops()
	in := bufio.NewScanner(os.Stdin)
	say("ready")
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		switch cmd {
		case "go":
			if err := w.open(); err != nil {
				return err
			}
			for i := range nemesisGoroutines {
				loops.Go(func() { w.loop(seed+uint64(i), 5*time.Millisecond, false, stop) })
			}
			loops.Go(func() { w.slow.loop(seed+nemesisGoroutines, nemSlowPause, true, stop) })
		case "limit":
			if err := w.setLimit(arg); err != nil {
				return fmt.Errorf("setrlimit %s: %w", arg, err)
			}
		case "stop":
			stopLoops()
			say("stopped")
		case "final":
			if err := w.open(); err != nil {
				return err
			}
			var cur string
			b := w.breaker(&cur)
			for _, name := range nemCircuits {
				switch arg {
				case "call":
					// A call that finds the index damaged replaces it and fails
					// closed (the damage rule); the circuit must work after it.
					if err := w.call(b, &cur, name, circuit.Success, 0); errors.As(err, new(*damagedError)) {
						w.call(b, &cur, name, circuit.Success, 0)
					}
				case "snap":
					snap, err := w.snapshot(b, &cur, name)
					say("snap %s %s %d %d %t %s", name, snap.State, snap.Generation, snap.Failures, snap.Exists, quoteErr(err))
				}
			}
			if arg == "call" {
				say("called")
			}
		default:
			return fmt.Errorf("unknown command %q", in.Text())
		}
		if err := w.h.failed(); err != nil {
			return fmt.Errorf("history: %w", err)
		}
	}
	return in.Err()
}
