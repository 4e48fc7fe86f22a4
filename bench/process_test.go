//go:build linux

package bench

// Several processes on one circuit. The test binary re-executes itself as
// worker processes (-test.run=^TestHelperProcess$ with helperEnv set), the
// standard library's way: each worker opens the shared state directory,
// waits for the parent's "go", runs its goroutines' guarded calls, and
// reports its /proc/self/io counters and its time as one "result" line.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/gofrs/flock"
)

// The workers' environment.
const (
	helperEnv     = "CIRCUITGEN_BENCH_HELPER"     // "1" in a worker
	implEnv       = "CIRCUITGEN_BENCH_IMPL"       // circuitgen, naive, gobreaker or failsafe
	dirEnv        = "CIRCUITGEN_BENCH_DIR"        // the shared state directory
	callsEnv      = "CIRCUITGEN_BENCH_CALLS"      // guarded calls per goroutine
	goroutinesEnv = "CIRCUITGEN_BENCH_GOROUTINES" // goroutines per worker
	deadlineEnv   = "CIRCUITGEN_BENCH_DEADLINE"   // optional: a deadline for the loop's context
)

// The multi-process shape: processes × goroutines on one closed circuit.
const (
	mpProcesses  = 4
	mpGoroutines = 2
)

// ioCounters are the read and write system call counters of /proc/self/io.
type ioCounters struct {
	Syscr, Syscw int64
}

func (c ioCounters) sub(d ioCounters) ioCounters {
	return ioCounters{c.Syscr - d.Syscr, c.Syscw - d.Syscw}
}

// workerResult is what a worker reports.
type workerResult struct {
	Calls     int64      // guarded calls made
	ElapsedNS int64      // the loop's wall time
	Loop      ioCounters // counter deltas across the guarded loop
	Empty     ioCounters // across an empty loop of the same shape
	Bracket   ioCounters // across two readings with nothing between
	Err       string     // the first error, if any
}

// procIO reads /proc/self/io with a single pread(2) on a file opened once,
// so that each reading costs exactly one read system call.
type procIO struct {
	f   *os.File
	buf [512]byte
}

func openProcIO() (*procIO, error) {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return nil, err
	}
	return &procIO{f: f}, nil
}

func (p *procIO) read() (ioCounters, error) {
	n, err := syscall.Pread(int(p.f.Fd()), p.buf[:], 0)
	if err != nil {
		return ioCounters{}, err
	}
	var c ioCounters
	for line := range strings.Lines(string(p.buf[:n])) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		x, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "syscr":
			c.Syscr = x
		case "syscw":
			c.Syscw = x
		}
	}
	return c, nil
}

// TestHelperProcess is a worker of TestHappyPathNoSyscalls and
// BenchmarkMultiProcess; run directly, it does nothing.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	res := runWorker()
	line, _ := json.Marshal(res)
	fmt.Printf("result %s\n", line)
	os.Exit(0)
}

// workerCall returns the worker's guarded call for its implementation.
func workerCall(impl, dir string) (func(context.Context) error, error) {
	switch impl {
	case "circuitgen", "naive":
		var store circuit.Store = &naiveStore{dir: dir}
		if impl == "circuitgen" {
			s, err := filestore.Open(dir)
			if err != nil {
				return nil, err
			}
			store = s
		}
		_, up, _ := guarded(store)
		return func(ctx context.Context) error { _, err := up.Get(ctx, 1); return err }, nil
	case "gobreaker":
		cb := newGobreaker(3, 30*time.Second)
		return func(context.Context) error { _, err := cb.Execute(peerUp); return err }, nil
	case "failsafe":
		ex, _ := newFailsafe(3, 30*time.Second)
		return func(context.Context) error { _, err := ex.Get(peerUp); return err }, nil
	}
	return nil, fmt.Errorf("unknown implementation %q", impl)
}

// runWorker is the worker's body.
func runWorker() (res workerResult) {
	fail := func(err error) workerResult { res.Err = err.Error(); return res }
	calls, err := strconv.Atoi(os.Getenv(callsEnv))
	if err != nil {
		return fail(err)
	}
	goroutines, err := strconv.Atoi(os.Getenv(goroutinesEnv))
	if err != nil {
		return fail(err)
	}
	call, err := workerCall(os.Getenv(implEnv), os.Getenv(dirEnv))
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	if d := os.Getenv(deadlineEnv); d != "" {
		timeout, err := time.ParseDuration(d)
		if err != nil {
			return fail(err)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if err := call(ctx); err != nil { // warm up: the first call reads the record
		return fail(err)
	}
	pio, err := openProcIO()
	if err != nil {
		return fail(err)
	}

	// loop runs calls calls of f on each of goroutines goroutines.
	var firstErr error
	var errOnce sync.Once
	loop := func(f func(context.Context) error) {
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range calls {
					if err := f(ctx); err != nil {
						errOnce.Do(func() { firstErr = err })
						return
					}
				}
			})
		}
		wg.Wait()
	}
	// measure returns the counters' change across fn.
	measure := func(fn func()) ioCounters {
		before, err := pio.read()
		if err != nil {
			panic(err)
		}
		fn()
		after, err := pio.read()
		if err != nil {
			panic(err)
		}
		return after.sub(before)
	}
	noop := func(context.Context) error { return nil }
	res.Bracket = measure(func() {})
	res.Empty = measure(func() { loop(noop) })

	// Wait for the parent's go, so that every worker's loop overlaps.
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fail(err)
	}
	start := time.Now()
	res.Loop = measure(func() { loop(call) })
	res.ElapsedNS = time.Since(start).Nanoseconds()
	res.Calls = int64(calls) * int64(goroutines)
	if firstErr != nil {
		return fail(firstErr)
	}
	return res
}

// worker is a started worker process.
type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr bytes.Buffer
}

// startWorkers starts n workers of impl on dir, each making calls calls on
// each of its goroutines, and waits until every one is ready.
func startWorkers(tb testing.TB, n int, impl, dir string, calls int, deadline time.Duration) []*worker {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	ws := make([]*worker, n)
	for i := range ws {
		w := &worker{cmd: exec.Command(exe, "-test.run=^TestHelperProcess$", "-test.count=1")}
		w.cmd.Env = append(os.Environ(),
			helperEnv+"=1", implEnv+"="+impl, dirEnv+"="+dir,
			callsEnv+"="+strconv.Itoa(calls), goroutinesEnv+"="+strconv.Itoa(mpGoroutines))
		if deadline > 0 {
			w.cmd.Env = append(w.cmd.Env, deadlineEnv+"="+deadline.String())
		}
		w.cmd.Stderr = &w.stderr
		if w.stdin, err = w.cmd.StdinPipe(); err != nil {
			tb.Fatal(err)
		}
		out, err := w.cmd.StdoutPipe()
		if err != nil {
			tb.Fatal(err)
		}
		w.lines = bufio.NewScanner(out)
		if err := w.cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = w.cmd.Process.Kill(); _ = w.cmd.Wait() })
		ws[i] = w
	}
	for i, w := range ws {
		for {
			if !w.lines.Scan() {
				tb.Fatalf("worker %d exited before it was ready: %s", i, w.stderr.String())
			}
			if line := w.lines.Text(); line == "ready" {
				break
			} else if res, ok := strings.CutPrefix(line, "result "); ok {
				tb.Fatalf("worker %d failed before it was ready: %s", i, res)
			}
		}
	}
	return ws
}

// goWorkers releases ready workers and returns their results.
func goWorkers(tb testing.TB, ws []*worker) []workerResult {
	tb.Helper()
	for _, w := range ws {
		if _, err := io.WriteString(w.stdin, "go\n"); err != nil {
			tb.Fatal(err)
		}
	}
	results := make([]workerResult, len(ws))
	for i, w := range ws {
		found := false
		for w.lines.Scan() {
			if line, ok := strings.CutPrefix(w.lines.Text(), "result "); ok {
				if err := json.Unmarshal([]byte(line), &results[i]); err != nil {
					tb.Fatal(err)
				}
				found = true
				break
			}
		}
		if err := w.cmd.Wait(); err != nil || !found {
			tb.Fatalf("worker %d: %v, result found: %v; stderr: %s", i, err, found, w.stderr.String())
		}
		if results[i].Err != "" {
			tb.Fatalf("worker %d: %s", i, results[i].Err)
		}
	}
	return results
}

// prepare creates the closed circuit's record in dir, as a first call
// through the file store does, and returns its record and lock files.
func prepare(tb testing.TB, dir string, record bool) (path, lock string) {
	tb.Helper()
	s, err := filestore.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	_, up, _ := guarded(s)
	if _, err := up.Get(context.Background(), 1); err != nil {
		tb.Fatal(err)
	}
	if record { // a healthy call writes none: a Clear writes a closed one
		if err := circuit.New(s).Clear(context.Background(), "bench-closed"); err != nil {
			tb.Fatal(err)
		}
	}
	key := circuit.Key("bench-closed")
	return filepath.Join(dir, key+".json"), filepath.Join(dir, key+".lock")
}

// fileID is what identifies a file's content without reading it.
type fileID struct {
	Ino, Size        uint64
	MtimeNS, CtimeNS int64
	Nlink            uint64
	Content          []byte // the change index's bytes; nil for other files
}

// identify returns the identity of path, and its content when it is the
// change index, whose counters must not move either.
func identify(tb testing.TB, path string) fileID {
	tb.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		tb.Fatalf("lstat %s: %v", path, err)
	}
	id := fileID{Ino: st.Ino, Size: uint64(st.Size), MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano(), Nlink: uint64(st.Nlink)}
	if filepath.Base(path) == "index" {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		id.Content = b
	}
	return id
}

// dirState identifies every file in dir.
func dirState(tb testing.TB, dir string) map[string]fileID {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	m := make(map[string]fileID, len(entries))
	for _, e := range entries {
		m[e.Name()] = identify(tb, filepath.Join(dir, e.Name()))
	}
	return m
}

// TestHappyPathNoSyscalls is the proof of the third row: four
// processes of two goroutines each hammer one closed circuit while this
// process holds the circuit's flock, for a circuit with no record (the
// healthy circuit, which never writes one) and for one with a closed
// record. Each worker must finish (a worker that tried to take the lock
// would wait until its deadline and fail), read and write nothing (its
// /proc/self/io syscr and syscw do not move, beyond the one read that reads
// the counters), and leave every file of the state directory as it was:
// the record, if any, the lock file and the change index.
func TestHappyPathNoSyscalls(t *testing.T) {
	if _, err := os.Stat("/proc/self/io"); err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, tt := range []struct {
		name   string
		record bool
	}{{"NoRecord", false}, {"ClosedRecord", true}} {
		t.Run(tt.name, func(t *testing.T) { happyPathNoSyscalls(t, tt.record) })
	}
}

func happyPathNoSyscalls(t *testing.T, record bool) {
	dir := filepath.Join(t.TempDir(), "state")
	path, lock := prepare(t, dir, record)
	fl := flock.New(lock)
	if ok, err := fl.TryLock(); err != nil || !ok {
		t.Fatalf("taking the circuit's lock: %v, %v", ok, err)
	}
	defer fl.Close()
	before := dirState(t, dir)
	if _, ok := before["index"]; !ok {
		t.Fatalf("no change index in %s: %v", dir, before)
	}
	if _, ok := before[filepath.Base(path)]; ok != record {
		t.Fatalf("record in %s: %t, want %t", dir, ok, record)
	}

	const calls = 1_000_000
	ws := startWorkers(t, mpProcesses, "circuitgen", dir, calls, time.Minute) // a worker waiting for the lock would wait out the minute
	start := time.Now()
	results := goWorkers(t, ws)
	elapsed := time.Since(start)

	var total int64
	for i, r := range results {
		total += r.Calls
		t.Logf("worker %d: %d calls in %v; syscr/syscw deltas: loop %+v, empty loop %+v, bracket %+v",
			i, r.Calls, time.Duration(r.ElapsedNS), r.Loop, r.Empty, r.Bracket)
		if r.Calls != calls*mpGoroutines {
			t.Errorf("worker %d made %d calls, want %d", i, r.Calls, calls*mpGoroutines)
		}
		// The bracket is the reading's own pread. The Go runtime makes no
		// read or write of its own in the empty loop; were it to, the
		// guarded loop would be allowed as many.
		allowed := ioCounters{max(r.Bracket.Syscr, r.Empty.Syscr), max(r.Bracket.Syscw, r.Empty.Syscw)}
		if r.Loop.Syscr > allowed.Syscr || r.Loop.Syscw > allowed.Syscw {
			t.Errorf("worker %d: %d guarded calls made read/write system calls: %+v, more than the empty loop's %+v",
				i, r.Calls, r.Loop, allowed)
		}
	}
	t.Logf("%d processes × %d goroutines: %d calls in %v (%.0f calls/s), with the flock held by the test",
		mpProcesses, mpGoroutines, total, elapsed, float64(total)/elapsed.Seconds())

	after := dirState(t, dir)
	if len(after) != len(before) {
		t.Errorf("state directory changed: before %d files, after %d", len(before), len(after))
	}
	for name, b := range before {
		a, ok := after[name]
		if !ok {
			t.Errorf("%s disappeared", name)
			continue
		}
		if a.Ino != b.Ino || a.Size != b.Size || a.MtimeNS != b.MtimeNS || a.CtimeNS != b.CtimeNS || a.Nlink != b.Nlink ||
			!bytes.Equal(a.Content, b.Content) {
			a.Content, b.Content = nil, nil
			t.Errorf("%s changed: before %+v, after %+v", name, b, a)
		}
	}
}

// TestProcIOSeesReads is the control of TestHappyPathNoSyscalls: the same
// measurement on the naive store, which reads the record on every
// admission and settlement, shows those reads.
func TestProcIOSeesReads(t *testing.T) {
	if _, err := os.Stat("/proc/self/io"); err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "state")
	if err := circuit.New(&naiveStore{dir: dir}).Clear(t.Context(), "bench-closed"); err != nil { // a record to read
		t.Fatal(err)
	}
	const calls = 100
	results := goWorkers(t, startWorkers(t, 1, "naive", dir, calls, 10*time.Second))
	r := results[0]
	t.Logf("naive worker: loop %+v, empty %+v, bracket %+v", r.Loop, r.Empty, r.Bracket)
	// Each call reads the record twice (admission, settlement), each read
	// at least one read(2).
	if minReads := int64(2 * calls * mpGoroutines); r.Loop.Syscr-r.Bracket.Syscr < minReads {
		t.Errorf("the naive store's %d calls made %d reads, want at least %d: the measurement does not see reads",
			calls*mpGoroutines, r.Loop.Syscr-r.Bracket.Syscr, minReads)
	}
}

// BenchmarkMultiProcess measures the aggregate throughput of mpProcesses
// processes × mpGoroutines goroutines calling one closed circuit (for the
// in-memory peers, each process has its own breaker: they share nothing).
// ns/op is wall time per call across all of them; calls/s its inverse.
// Starting the processes is not timed.
func BenchmarkMultiProcess(b *testing.B) {
	run := func(impl string) func(b *testing.B) {
		return func(b *testing.B) {
			b.StopTimer()
			dir := filepath.Join(b.TempDir(), "state")
			if impl == "circuitgen" {
				prepare(b, dir, false)
			}
			per := (b.N + mpProcesses*mpGoroutines - 1) / (mpProcesses * mpGoroutines)
			ws := startWorkers(b, mpProcesses, impl, dir, per, 0)
			b.StartTimer()
			goWorkers(b, ws)
			b.StopTimer()
			b.ReportMetric(float64(per*mpProcesses*mpGoroutines)/b.Elapsed().Seconds(), "calls/s")
		}
	}
	var impls []impl
	for _, name := range []string{"circuitgen", "gobreaker", "failsafe", "naive"} {
		impls = append(impls, impl{name, run(name)})
	}
	runImpls(b, impls)
}
