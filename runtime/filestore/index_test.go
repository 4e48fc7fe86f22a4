//go:build linux

package filestore

// Faults of the state directory, each reproduced first: a change index that could
// not be opened, many circuits under a low fd limit, a truncated index, an
// oversized record, records removed by hand, an unwritable or unlockable
// store, state owned by another user, and the clock's anchor. Where another
// process is involved it is a real one: a child running one of
// helperScripts (process_test.go).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

const envArg = "CIRCUITGEN_TEST_ARG" // a script's argument

var p3 = circuit.Policy{FailureThreshold: 3, Cooldown: 10 * time.Minute, ProbeLease: 10 * time.Second}

var errBoom = errors.New("boom")

// script is a running helper process.
type script struct {
	cmd   *exec.Cmd
	lines *bufio.Scanner
	in    io.WriteCloser
	log   strings.Builder
}

// startScript runs helperScripts[role] in a child on dir, with arg; attr,
// when set, is its SysProcAttr and bin the test binary to run.
func startScript(t *testing.T, role, dir, arg string, attr *syscall.SysProcAttr, bin string) *script {
	t.Helper()
	if bin == "" {
		bin = os.Args[0]
	}
	cmd := exec.Command(bin, "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envRole+"="+role, envDir+"="+dir, envArg+"="+arg)
	cmd.SysProcAttr = attr
	sc := &script{cmd: cmd}
	cmd.Stderr = &sc.log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if sc.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	sc.lines = bufio.NewScanner(out)
	sc.lines.Buffer(nil, 1<<20)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return sc
}

// next returns the child's next line of output.
func (sc *script) next(t *testing.T) string {
	t.Helper()
	if !sc.lines.Scan() {
		err := sc.cmd.Wait()
		t.Fatalf("helper ended (%v) without a line; stderr:\n%s", err, sc.log.String())
	}
	return sc.lines.Text()
}

// expect reads lines until one starts with prefix, and returns it.
func (sc *script) expect(t *testing.T, prefix string) string {
	t.Helper()
	for {
		if l := sc.next(t); strings.HasPrefix(l, prefix) {
			return l
		}
	}
}

// wait waits for the child to exit 0.
func (sc *script) wait(t *testing.T) {
	t.Helper()
	_ = sc.in.Close()
	for sc.lines.Scan() {
	}
	if err := sc.cmd.Wait(); err != nil {
		t.Fatalf("helper: %v; stderr:\n%s", err, sc.log.String())
	}
}

// say prints a line for the parent of a helper script.
func say(format string, args ...any) { fmt.Printf(format+"\n", args...) }

// outcome names a call's result for the parent: ok, open, state: …, or the
// operation's own error.
func outcome(err error) string {
	var open *circuit.OpenError
	var se *circuit.StateError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &open):
		return "open"
	case errors.As(err, &se):
		return "state: " + err.Error()
	}
	return "err: " + err.Error()
}

func openDir(t *testing.T, dir string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// failN makes n failing calls and returns how many ran and the last error.
func failN(ctx context.Context, b *circuit.Breaker, name string, n int) (ran int, last error) {
	for range n {
		last = b.Run(ctx, name, p3, func(context.Context) (circuit.Outcome, error) { ran++; return circuit.Failure, errBoom })
	}
	return ran, last
}

func init() {
	// indexfault: the first open of the change index fails with EMFILE,
	// then three failures open the circuit. It prints each call's outcome.
	helperScripts["indexfault"] = func() error {
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		first := true
		faultHook = func(op string) error {
			if op == "index" && first {
				first = false
				return syscall.EMFILE
			}
			return nil
		}
		b := circuit.New(s)
		for range 4 {
			err := b.Run(context.Background(), helperCircuit, p3, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errBoom })
			say("%s", outcome(err))
		}
		return nil
	}
}

// TestIndexOpenFailureIsRetried: a process whose first open of
// the change index failed (EMFILE) must not go on writing without bumping
// it. The parent's Breaker has the circuit's closed record cached; a child
// whose first index open fails then fails three times: the parent must see
// the circuit open.
func TestIndexOpenFailureIsRetried(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	b := circuit.New(openDir(t, dir))
	ctx := t.Context()
	if err := b.Run(ctx, helperCircuit, p3, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
		t.Fatal(err)
	}
	sc := startScript(t, "indexfault", dir, "", nil, "")
	var outs []string
	for range 4 {
		outs = append(outs, sc.next(t))
	}
	sc.wait(t)
	t.Logf("child's calls: %q", outs)
	if !strings.HasPrefix(outs[0], "state: ") || !strings.Contains(outs[0], "too many open files") {
		t.Errorf("child's first call, with the index unopenable: %q, want a StateError (EMFILE)", outs[0])
	}
	snap, err := b.Snapshot(ctx, helperCircuit)
	if err != nil || snap.State != circuit.StateOpen {
		t.Fatalf("parent sees %+v, %v after the child's failures; want open", snap, err)
	}
	ran := false
	err = b.Run(ctx, helperCircuit, p3, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
	if !errors.Is(err, circuit.ErrOpen) || ran {
		t.Fatalf("parent's call: %v (ran %v), want rejected as open", err, ran)
	}
}

// TestIndexUnopenableFailsClosed: a writer that cannot open or create the
// index renames nothing; once the fault is gone the same store works.
func TestIndexUnopenableFailsClosed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s := openDir(t, dir)
	b := circuit.New(s)
	ctx := t.Context()
	faultHook = func(op string) error {
		if op == "index" {
			return syscall.ENOSPC
		}
		return nil
	}
	ran, err := failN(ctx, b, "ledger", 1)
	faultHook = nil
	var se *circuit.StateError
	if !errors.As(err, &se) || ran != 0 {
		t.Fatalf("with no index to be had: %v (ran %d), want a StateError before the call", err, ran)
	}
	if _, err := os.Stat(filepath.Join(dir, circuit.Key("ledger")+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a record was written without an index: %v", err)
	}
	if ran, err := failN(ctx, b, "ledger", 3); ran != 3 || !errors.Is(err, errBoom) {
		t.Fatalf("after the fault: %d ran, %v", ran, err)
	}
	if snap, err := circuit.New(openDir(t, dir)).Snapshot(ctx, "ledger"); err != nil || snap.State != circuit.StateOpen {
		t.Fatalf("a fresh store sees %+v, %v; want open", snap, err)
	}
}

// manyCircuits is how many circuits TestManyCircuitsFewFDs makes: 100,000
// in soak mode (make soak), 5,000 otherwise (still five times the fd limit
// and past the index's 4,096 slots).
func manyCircuits() int {
	if soakMode() {
		return 100_000
	}
	return 5_000
}

func circuitName(i int) string { return fmt.Sprintf("svc-%06d", i) }

func init() {
	// many: under RLIMIT_NOFILE 1024, call every one of the directory's
	// circuits (closed: no write), fail once on one in a hundred, list the
	// names, and time closed calls on a circuit with a slot of its own and
	// one beyond the slots; print "fds", "heap", "names", "cost" lines.
	helperScripts["many"] = func() error {
		lim := syscall.Rlimit{Cur: 1024, Max: 1024}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return err
		}
		var n int
		fmt.Sscan(os.Getenv(envArg), &n)
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		b := circuit.New(s)
		ctx := context.Background()
		cs := make([]*circuit.Circuit, n)
		for i := range n {
			cs[i] = b.Circuit(circuitName(i), p3)
			if err := cs[i].Run(ctx, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
				return fmt.Errorf("circuit %d: %w", i, err)
			}
		}
		for i := 0; i < n; i += 100 {
			if err := cs[i].Run(ctx, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errBoom }); err != errBoom {
				return fmt.Errorf("failure on circuit %d: %w", i, err)
			}
		}
		fds, _ := os.ReadDir("/proc/self/fd")
		say("fds %d", len(fds))
		var ms runtimeMemStats
		readMem(&ms)
		say("heap %d", ms.HeapInuse)
		names, err := s.Names(ctx)
		if err != nil {
			return err
		}
		say("names %d", len(names))
		// Which circuits have a slot of their own: those whose counter is
		// owned in the mapping.
		var owned, spilled *circuit.Circuit
		// Written circuits have claimed slots (the first 4,096 or so);
		// the others are read by their spill counters.
		m := s.m.Load()
		for i := 1; i < n && (owned == nil || spilled == nil); i++ {
			c := m.counterOf(tag(circuitName(i)))
			switch {
			case c.owned && owned == nil:
				owned = cs[i]
			case !c.owned && spilled == nil:
				spilled = cs[i]
			}
		}
		if owned == nil || spilled == nil {
			return fmt.Errorf("no circuit with an own slot (%v) or none beyond the slots (%v)", owned, spilled)
		}
		cost := func(c *circuit.Circuit) time.Duration {
			const calls = 200_000
			start := time.Now()
			for range calls {
				_ = c.Run(ctx, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
			}
			return time.Since(start) / calls
		}
		var in, beyond time.Duration
		for range 3 { // interleaved, best of three
			a, b := cost(owned), cost(spilled)
			if in == 0 || a < in {
				in = a
			}
			if beyond == 0 || b < beyond {
				beyond = b
			}
		}
		say("cost %d %d", in, beyond)
		return nil
	}
}

// TestManyCircuitsFewFDs: a process holds no file per circuit.
// The parent writes manyCircuits closed records (as a writer would, with
// the index made by the store); a child limited to 1,024 open files calls
// every circuit, fails once on one in a hundred, lists every name, and
// times closed calls on a circuit within the index's slots and one beyond
// them.
func TestManyCircuitsFewFDs(t *testing.T) {
	n := manyCircuits()
	dir := filepath.Join(t.TempDir(), "state")
	s := openDir(t, dir)
	ctx := t.Context()
	if err := circuit.New(s).Run(ctx, circuitName(0), p3, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
		t.Fatal(err)
	}
	at := s.Now().UTC().Truncate(time.Millisecond)
	for i := 1; i < n; i++ {
		rec := machine.Cleared(nil, circuitName(i), at, func() string { return fmt.Sprintf("%032x", i) })
		data, err := encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(recordPathOf(dir, circuitName(i)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	sc := startScript(t, "many", dir, fmt.Sprint(n), nil, "")
	var fds, heap, names int
	var in, beyond time.Duration
	fmt.Sscanf(sc.expect(t, "fds "), "fds %d", &fds)
	fmt.Sscanf(sc.expect(t, "heap "), "heap %d", &heap)
	fmt.Sscanf(sc.expect(t, "names "), "names %d", &names)
	fmt.Sscanf(sc.expect(t, "cost "), "cost %d %d", &in, &beyond)
	sc.wait(t)
	t.Logf("%d circuits under ulimit -n 1024 in %v: %d open fds, heap in use %.1f MiB; closed call %v within the slots, %v beyond",
		n, time.Since(start).Round(time.Millisecond), fds, float64(heap)/(1<<20), in, beyond)
	if fds > 32 {
		t.Errorf("%d open fds after %d circuits, want a small bound", fds, n)
	}
	if names != n {
		t.Errorf("Names listed %d circuits, want %d", names, n)
	}
	if beyond > 3*in+500*time.Nanosecond {
		t.Errorf("a closed call beyond the slots costs %v, within %v: want about the same", beyond, in)
	}
}

// recordPathOf is the record file of name in dir.
func recordPathOf(dir, name string) string { return filepath.Join(dir, circuit.Key(name)+".json") }

func init() {
	// hammer: closed calls in a loop, under p3 or the policy
	// hammerPolicies names by the argument; on the first error other than
	// the operation's, print it, then make calls until one works, print
	// "ok".
	helperScripts["hammer"] = func() error {
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		p, ok := hammerPolicies[os.Getenv(envArg)]
		if !ok {
			p = p3
		}
		b := circuit.New(s)
		c := b.Circuit(helperCircuit, p)
		ctx := context.Background()
		say("ready")
		for {
			err := c.Run(ctx, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
			if err != nil {
				say("%s", outcome(err))
				break
			}
		}
		for range 1000 {
			if err := c.Run(ctx, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err == nil {
				say("ok")
				return nil
			}
			time.Sleep(time.Millisecond)
		}
		return errors.New("calls kept failing after the index was damaged")
	}
}

// TestIndexTruncatedUnderRunningProcess: truncating the index in place
// under a process that uses it is outside the store's model, and loud: the
// process dies of SIGBUS, as with a bbolt file, and is never left admitting
// calls. The next process finds the index damaged, fails that call closed
// with a StateError, replaces the index, and calls work.
func TestIndexTruncatedUnderRunningProcess(t *testing.T) {
	for _, size := range []int64{0, 100, headerSize + 8} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			sc := startScript(t, "hammer", dir, "", nil, "")
			sc.expect(t, "ready")
			// Its first call makes the index; on a loaded machine that
			// can come well after "ready".
			index := filepath.Join(dir, indexName)
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(index); err == nil || time.Now().After(deadline) {
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
			if err := os.Truncate(index, size); err != nil {
				t.Fatal(err)
			}
			// It dies of SIGBUS; only if its recheck came between the cut
			// and its next touch of the mapping does it find the damage
			// first (a StateError, then calls work: the old rule).
			_ = sc.in.Close()
			var said []string
			for sc.lines.Scan() {
				said = append(said, sc.lines.Text())
			}
			if err := sc.cmd.Wait(); err == nil {
				if len(said) != 2 || !strings.HasPrefix(said[0], "state: ") || said[1] != "ok" {
					t.Fatalf("the running process lived on saying %q, want a StateError and ok", said)
				}
				t.Logf("the recheck came first: %q", said)
				return
			} else if stderr := sc.log.String(); !faultDeath(stderr) || len(said) != 0 {
				t.Fatalf("the running process after the truncation: %v, saying %q; want it killed by SIGBUS; stderr:\n%.500s", err, said, stderr)
			}
			next := startScript(t, "hammer", dir, "", nil, "")
			next.expect(t, "ready")
			if got := next.next(t); !strings.HasPrefix(got, "state: ") || !strings.Contains(got, "index") {
				t.Errorf("the next process's first call: %q, want a StateError about the damaged index", got)
			}
			next.expect(t, "ok")
			_ = next.cmd.Process.Kill()
		})
	}
}

// faultDeath reports whether stderr is a Go process's death by a memory
// fault. The runtime names the signal (SIGBUS) unless a second fault while
// it prints the first overwrites the report ("fatal error: fault" and a
// SIGSEGV): both are the loud death the model promises.
func faultDeath(stderr string) bool {
	return strings.Contains(stderr, "SIGBUS") ||
		strings.Contains(stderr, "unexpected fault address") && strings.Contains(stderr, "fatal error: fault")
}

// TestDamagedIndexIsStateError: a short, long or garbage index found by a
// process is a StateError for the call that finds it, which replaces it;
// the circuit's state survives.
func TestDamagedIndexIsStateError(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(path string) error
	}{
		{"Empty", func(p string) error { return os.Truncate(p, 0) }},
		{"Short", func(p string) error { return os.Truncate(p, 4095) }},
		{"Long", func(p string) error { return os.Truncate(p, indexSize+1) }},
		{"Garbage", func(p string) error { return os.WriteFile(p, []byte(strings.Repeat("garbage!", indexSize/8)), 0o600) }},
		{"Directory", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o700)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			ctx := t.Context()
			if ran, err := failN(ctx, circuit.New(openDir(t, dir)), "ledger", 1); ran != 1 || err != errBoom {
				t.Fatal(err)
			}
			if err := tt.damage(filepath.Join(dir, indexName)); err != nil {
				t.Fatal(err)
			}
			b := circuit.New(openDir(t, dir))
			ran, err := failN(ctx, b, "ledger", 1)
			var se *circuit.StateError
			if !errors.As(err, &se) || ran != 0 || !strings.Contains(err.Error(), "index") {
				t.Fatalf("first call on a damaged index: %v (ran %d), want a StateError naming the index", err, ran)
			}
			ran, err = failN(ctx, b, "ledger", 1)
			if tt.name == "Directory" { // cannot be replaced: stays closed to calls
				if !errors.As(err, &se) || ran != 0 {
					t.Fatalf("next call with a directory as the index: %v (ran %d), want a StateError", err, ran)
				}
				return
			}
			if ran != 1 || err != errBoom {
				t.Fatalf("next call: %v (ran %d), want the operation's error", err, ran)
			}
			if snap, err := b.Snapshot(ctx, "ledger"); err != nil || snap.Failures != 2 {
				t.Fatalf("after the index was replaced: %+v, %v; want 2 failures", snap, err)
			}
		})
	}
}

// TestOversizedRecord: a record larger than any record is
// corrupt, read with a bounded reader (a sparse 1 TB file), and Clear
// removes it.
func TestOversizedRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	s := openDir(t, dir)
	b := circuit.New(s)
	if ran, err := failN(ctx, b, "ledger", 1); ran != 1 || err != errBoom {
		t.Fatal(err)
	}
	// Through another store, so that this one's copy is not what it reads.
	other := openDir(t, dir)
	if err := os.Truncate(recordPathOf(dir, "ledger"), 1<<40); err != nil {
		t.Fatal(err)
	}
	_, err := circuit.New(other).Snapshot(ctx, "ledger")
	var se *circuit.StateError
	if !errors.As(err, &se) || !se.Corrupt() {
		t.Fatalf("Snapshot of a 1 TB record: %v, want a corrupt StateError", err)
	}
	names, err := other.Names(ctx)
	if len(names) != 0 || !errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("Names: %q, %v; want none and ErrCorrupt", names, err)
	}
	if err := circuit.New(other).Clear(ctx, "ledger"); err != nil {
		t.Fatalf("Clear of a 1 TB record: %v", err)
	}
	for who, st := range map[string]*Store{"this": s, "other": other} {
		if snap, err := circuit.New(st).Snapshot(ctx, "ledger"); err != nil || snap.State != circuit.StateClosed || snap.Failures != 0 {
			t.Fatalf("%s store after Clear: %+v, %v; want closed, no failures", who, snap, err)
		}
	}
}

type runtimeMemStats = runtime.MemStats

func readMem(ms *runtime.MemStats) { runtime.GC(); runtime.ReadMemStats(ms) }

// TestReplacedIndexLetGo: a process lets go of every index file it no
// longer uses, so that the space of removed or replaced indexes is freed
// (on a small tmpfs, index damage repeated while processes run would
// otherwise fill it), and a goroutine still holding the old mapping reads
// zeroed memory of its own, not another mapping's, and no fault.
func TestReplacedIndexLetGo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s := openDir(t, dir)
	b := circuit.New(s)
	ctx := t.Context()
	succeed := func() error {
		return b.Run(ctx, "ledger", p3, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
	}
	if ran, err := failN(ctx, b, "ledger", 1); ran != 1 || err != errBoom {
		t.Fatal(err)
	}
	old := s.m.Load()
	for i := range 20 {
		cutIndex(t, filepath.Join(dir, indexName), int64(i), s)
		_ = succeed() // finds the damage: fails closed and replaces it
		if err := succeed(); err != nil {
			t.Fatalf("after replacement %d: %v", i, err)
		}
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, l := range strings.Split(string(maps), "\n") {
		if strings.Contains(l, dir) && strings.Contains(l, "(deleted)") {
			held++
		}
	}
	if held != 0 {
		t.Errorf("%d removed index files still mapped after 20 replacements, want 0", held)
	}
	if v := old.load(slotsOffset); v != 0 {
		t.Errorf("the first mapping still reads %#x after it was let go: want the zeroed memory that replaces its file", v)
	}
}

// cutIndex replaces the index by a copy of its first size bytes, renamed
// over it (truncating the file in place would kill every process using it:
// outside the model), and marks the mapping of each of stores due for its
// check, as its recheck does within a second: so their next call finds the
// damage.
func cutIndex(t *testing.T, index string, size int64, stores ...*Store) {
	t.Helper()
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	tmp := index + ".cut"
	if err := os.WriteFile(tmp, data[:min(size, int64(len(data)))], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, index); err != nil {
		t.Fatal(err)
	}
	for _, s := range stores {
		s.due()
	}
}

// shmDir returns a state directory on a tmpfs when there is one (/dev/shm):
// there the index's change time never moves by writeback, so nothing but
// the store's own protocol can drop a Watch.
func shmDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "filestore-")
		if err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(d) })
			return filepath.Join(d, "state")
		}
	}
	return filepath.Join(t.TempDir(), "state")
}

func succeedOp(ran *bool) func(context.Context) (circuit.Outcome, error) {
	return func(context.Context) (circuit.Outcome, error) { *ran = true; return circuit.Success, nil }
}

func failOp(context.Context) (circuit.Outcome, error) { return circuit.Failure, errBoom }

func init() {
	// claimdie: claims the slot of the circuit named by envArg as a writer
	// does (mapping.claim), and is killed by SIGKILL at its "claim" step,
	// in the middle of it, as a writer may be at any point.
	helperScripts["claimdie"] = func() error {
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		m, err := s.current(context.Background(), true)
		if err != nil {
			return err
		}
		stepHook = func(step string) {
			if step == "claim" {
				say("claimed")
				_ = os.Stdout.Sync()
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
		m.claim(tag(os.Getenv(envArg)))
		return errors.New("claimed no free slot")
	}
}

// TestWriterKilledMidClaim: a writer SIGKILLed while it claims its
// circuit's slot (index.go claim) leaves the slot claimed. A process that
// read the circuit before, under the spill counter, must not keep a Watch
// of it: every later change of the circuit goes to the slot. The killed
// claim leaves the spill counter busy, so the process reads the file, and
// sees the circuit another process opens.
func TestWriterKilledMidClaim(t *testing.T) {
	ctx := t.Context()
	dir := shmDir(t)
	const name = helperCircuit
	// Another process makes the index.
	if _, _, err := openDir(t, dir).Load(ctx, "someone-else"); err != nil {
		t.Fatal(err)
	}
	reader := circuit.New(openDir(t, dir))
	ran := false
	if err := reader.Run(ctx, name, p3, succeedOp(&ran)); err != nil || !ran {
		t.Fatalf("reader's first call: %v, ran %v", err, ran)
	}

	sc := startScript(t, "claimdie", dir, name, nil, "")
	sc.expect(t, "claimed")
	var ee *exec.ExitError
	if err := sc.cmd.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("claimdie: %v, want death by SIGKILL", err)
	}

	writer := circuit.New(openDir(t, dir))
	if ran, err := failN(ctx, writer, name, 3); ran != 3 || err != errBoom {
		t.Fatalf("writer: %d ran, %v", ran, err)
	}
	if snap, err := writer.Snapshot(ctx, name); err != nil || snap.State != circuit.StateOpen {
		t.Fatalf("writer's snapshot: %+v, %v; want open", snap, err)
	}
	if snap, err := circuit.New(openDir(t, dir)).Snapshot(ctx, name); err != nil || snap.State != circuit.StateOpen {
		t.Fatalf("a new process's snapshot: %+v, %v; want open", snap, err)
	}

	start := time.Now()
	admitted, calls := 0, 0
	for time.Since(start) < 3*recheck+500*time.Millisecond {
		ran := false
		_ = reader.Run(ctx, name, p3, succeedOp(&ran))
		calls++
		if ran {
			admitted++
		}
		time.Sleep(100 * time.Millisecond)
	}
	if admitted > 0 {
		t.Fatalf("the reader admitted %d of %d calls over %v into a circuit another process opened "+
			"(its writes went to the slot a killed writer claimed)",
			admitted, calls, time.Since(start).Round(time.Millisecond))
	}
}

// TestIndexLockHeldBoundsCalls: index.lock held by a cooperating process
// that is stopped (SIGSTOP) or stuck while it creates or anchors the index
// (a new state directory, the first use after a reboot). A call whose
// context never ends may wait for it; every other call of the process is
// bounded by its own context, and Store.Now takes no lock.
func TestIndexLockHeldBoundsCalls(t *testing.T) {
	for _, tt := range []struct {
		name  string
		first func(s *Store, b *circuit.Breaker) // what takes Store.mu and waits
	}{
		{"RunWithBackground", func(s *Store, b *circuit.Breaker) {
			ran := false
			_ = b.Run(context.Background(), "first", p3, succeedOp(&ran))
		}},
		{"Now", func(s *Store, b *circuit.Breaker) { _ = s.Now() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := shmDir(t)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			// The stopped process's lock: a flock of another open file.
			held, err := lockFile(t.Context(), filepath.Join(dir, indexLockName))
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			s := openDir(t, dir)
			b := circuit.New(s)
			go tt.first(s, b)
			time.Sleep(100 * time.Millisecond)

			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				ran := false
				done <- b.Run(ctx, "second", p3, succeedOp(&ran))
			}()
			select {
			case err := <-done:
				t.Logf("a call with a 200ms deadline returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
			case <-time.After(3 * time.Second):
				_ = held.Close() // let both go
				err := <-done
				t.Fatalf("a call with a 200ms deadline had not returned after 3s (it returned %v once the lock was let go): "+
					"it waits behind a call waiting for index.lock without end", err)
			}
		})
	}
}

// TestNowCreatesNothing: the store's clock looks at the index, if there
// is one, and creates no directory: the first Load does (docs/file-store.md).
func TestNowCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s := openDir(t, dir)
	_ = s.Now()
	if _, err := os.Stat(filepath.Join(dir, indexName)); err == nil {
		t.Fatalf("Store.Now created the state directory and its index (%s)", dir)
	}
}

// TestMakerKeepsItsWatches: the process that makes the index gives Watches
// that hold across its first recheck: making it moves no change time
// after the mapping.
func TestMakerKeepsItsWatches(t *testing.T) {
	s := openDir(t, shmDir(t))
	_, w, err := s.LoadWatched(t.Context(), "ledger")
	if err != nil || !w.Holds() {
		t.Fatal(err, w.Holds())
	}
	time.Sleep(recheck + 300*time.Millisecond)
	if err := s.Refresh(t.Context()); err != nil || !w.Holds() {
		t.Fatalf("after the first recheck of an unchanged index: Refresh %v, Watch holds %v; want it to hold again", err, w.Holds())
	}
}

// TestDamageFoundByRefreshFailsTheCall: a Breaker that keeps a record and
// finds the index damaged at its recheck fails that call closed, as any
// call that finds the damage does (docs/file-store.md).
func TestDamageFoundByRefreshFailsTheCall(t *testing.T) {
	ctx := t.Context()
	dir := shmDir(t)
	b := circuit.New(openDir(t, dir))
	ran := false
	if err := b.Run(ctx, "ledger", p3, succeedOp(&ran)); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "index.garbage")
	if err := os.WriteFile(tmp, []byte("garbage!"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, indexName)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(recheck + 300*time.Millisecond)
	ran = false
	err := b.Run(ctx, "ledger", p3, succeedOp(&ran))
	if _, ok := errors.AsType[*circuit.StateError](err); !ok || ran {
		t.Fatalf("the call that found the index damaged: %v (ran %v), want a StateError naming the index", err, ran)
	}
}
