//go:build linux

package filestore

// The linearizability check: worker processes (this test binary,
// re-executed as the helper script "lin" of TestHelperProcess) make random admissions
// (Breaker.Allow), settlements (Ticket.Done, also of tickets held across
// phases and generations), snapshots and clears on a few circuits in one
// shared directory, some of them are SIGKILLed at random moments, and the
// history they report is checked with porcupine against a model of the
// state machine, partitioned by circuit.
//
// The model's step function is machine.Admit and machine.Settle, the pure
// state machine itself, rather than an independent model: what is under
// test here is the store and the Breaker's load–decide–replace loop around
// those functions (atomic replacement, the lock, the change index and the
// lock-free fast path, conflict retries), and the question is whether every
// concurrent run is equivalent to some sequential run of the state machine.
// The state machine's own rules are tested against the design in
// runtime/internal/machine (machine_test.go). The model names incarnations
// and probe tokens itself (from the id of the operation that drew them);
// they are only ever compared for equality, so its names stand for the
// random ones.
//
// Time: every process uses circuit.WithClock with a time the test sets per
// phase. The test sends each phase's time to every worker, and a phase
// starts only when every worker has finished the previous one, so every
// operation's time is known, the same in the real run and in the model, and
// phases advance it past cooldowns and leases (or not) at random.
//
// A killed worker's last operation has an unknown outcome: it is recorded
// with no return (porcupine's infinite return time) and an output the model
// accepts whatever it is, so that it may have taken effect at any point
// after its call, or never.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
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

	"github.com/anishathalye/porcupine"
	"golang.org/x/sys/unix"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Environment of a linearizability worker.
const (
	envLinDir  = "CIRCUITGEN_LIN_DIR"
	envLinSeed = "CIRCUITGEN_LIN_SEED"
	envLinID   = "CIRCUITGEN_LIN_ID" // the worker's client id
)

const linLine = "@@lin "

var linCircuits = []string{"lin-a", "lin-b", "lin-c", "lin-d"}

var linPolicy = circuit.Policy{FailureThreshold: 2, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

// linSteps are how far a phase may move the clock: not past anything, past
// a lease, past a cooldown, past both.
var linSteps = []time.Duration{time.Second, linPolicy.ProbeLease + time.Second, linPolicy.Cooldown, linPolicy.Cooldown + linPolicy.ProbeLease}

var linBase = time.Date(2032, 3, 4, 5, 6, 7, 0, time.UTC)

// monotonic returns CLOCK_MONOTONIC in nanoseconds: one clock for every
// process on the server, for the history's call and return times.
func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

func init() { helperScripts["lin"] = linWorker }

// linWorker runs phases read from stdin, "phase <unix nanoseconds> <ops>":
// ops random operations at that time, each reported as a "call" line before
// it starts and a "ret" line after it returns, then "done".
func linWorker() error {
	s, err := Open(os.Getenv(envLinDir))
	if err != nil {
		return err
	}
	seed, _ := strconv.ParseUint(os.Getenv(envLinSeed), 10, 64)
	id := os.Getenv(envLinID)
	rng := rand.New(rand.NewPCG(seed, 2))
	var now time.Time
	b := circuit.New(s, circuit.WithClock(func() time.Time { return now }))
	ctx := context.Background()
	type held struct {
		id, circuit string
		tk          *circuit.Ticket
	}
	var tickets []held
	var seq int
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	emit := func(format string, args ...any) {
		fmt.Fprintf(out, linLine+format+"\n", args...)
		_ = out.Flush() // before the operation starts, or it may not be seen
	}
	for in.Scan() {
		var nanos int64
		var ops int
		if _, err := fmt.Sscanf(in.Text(), "phase %d %d", &nanos, &ops); err != nil {
			return fmt.Errorf("command %q: %w", in.Text(), err)
		}
		now = time.Unix(0, nanos).UTC()
		for range ops {
			seq++
			op := fmt.Sprintf("%s.%d", id, seq)
			r := rng.IntN(100)
			if len(tickets) >= 3 || (len(tickets) > 0 && r < 40) {
				i := rng.IntN(len(tickets))
				h := tickets[i]
				tickets = append(tickets[:i], tickets[i+1:]...)
				o := []circuit.Outcome{circuit.Failure, circuit.Failure, circuit.Success, circuit.Success, circuit.Ignored}[rng.IntN(5)]
				emit("call %s done %s %s %d %d", op, h.circuit, h.id, o, monotonic())
				err := h.tk.Done(o)
				t := monotonic()
				if err != nil {
					emit("ret %s error %d %v", op, t, err)
				} else {
					emit("ret %s ok %d", op, t)
				}
				continue
			}
			name := linCircuits[rng.IntN(len(linCircuits))]
			switch {
			case r < 75:
				emit("call %s allow %s %s 0 %d", op, name, op, monotonic())
				tk, err := b.Allow(ctx, name, linPolicy)
				t := monotonic()
				var open *circuit.OpenError
				switch {
				case err == nil:
					tickets = append(tickets, held{op, name, tk})
					probe := 0
					if tk.Probe() {
						probe = 1
					}
					emit("ret %s admitted %d %d", op, t, probe)
				case errors.As(err, &open):
					emit("ret %s rejected %d %d %d", op, t, open.State, open.Until.UnixNano())
				default:
					emit("ret %s error %d %v", op, t, err)
				}
			case r < 97:
				emit("call %s snap %s - 0 %d", op, name, monotonic())
				snap, err := b.Snapshot(ctx, name)
				t := monotonic()
				if err != nil {
					emit("ret %s error %d %v", op, t, err)
					continue
				}
				exists := 0
				if snap.Exists {
					exists = 1
				}
				emit("ret %s snap %d %d %d %d %d %d %d", op, t, exists, snap.State, snap.Failures, snap.Generation,
					unixOrZero(snap.OpenUntil), unixOrZero(snap.LeaseUntil))
			default:
				emit("call %s clear %s - 0 %d", op, name, monotonic())
				err := b.Clear(ctx, name)
				t := monotonic()
				if err != nil {
					emit("ret %s error %d %v", op, t, err)
				} else {
					emit("ret %s ok %d", op, t)
				}
			}
		}
		emit("done")
	}
	return in.Err()
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func timeOrZero(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// linInput is an operation's input in the history.
type linInput struct {
	kind    string // "allow", "done", "snap" or "clear"
	circuit string
	ticket  string // allow: the ticket it issues; done: the ticket it settles
	outcome circuit.Outcome
	now     time.Time // the phase's time
	op      string    // the operation's unique id
}

// linOutput is an operation's output; unknown when the worker was killed
// before it returned.
type linOutput struct {
	unknown               bool
	admitted              bool
	probe                 bool
	state                 circuit.State // rejection: the rejecting state; snap: the state
	until                 time.Time     // rejection
	exists                bool          // snap
	failures              int
	gen                   uint64
	openUntil, leaseUntil time.Time
}

// linState is the model's state of one circuit: its record (nil: none) and
// the grants of the tickets issued and not yet settled.
type linState struct {
	rec    *driver.Record
	grants map[string]machine.Grant
}

func (s linState) withGrants(f func(map[string]machine.Grant)) linState {
	g := make(map[string]machine.Grant, len(s.grants)+1)
	for k, v := range s.grants {
		g[k] = v
	}
	f(g)
	return linState{rec: s.rec, grants: g}
}

// linRecEqual compares what of a record can affect later behaviour: not
// Version or UpdatedAt, which no decision and no snapshot compared here reads.
func linRecEqual(a, b *driver.Record) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.State == b.State && a.Failures == b.Failures && a.Generation == b.Generation &&
		a.Incarnation == b.Incarnation && a.OpenUntil.Equal(b.OpenUntil) && a.ProbeToken == b.ProbeToken &&
		a.LeaseUntil.Equal(b.LeaseUntil)
}

var linModel = (&porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		for _, op := range history {
			c := op.Input.(linInput).circuit
			by[c] = append(by[c], op)
		}
		var parts [][]porcupine.Operation
		for _, c := range linCircuits {
			if len(by[c]) > 0 {
				parts = append(parts, by[c])
			}
		}
		return parts
	},
	Init: func() []any { return []any{linState{}} },
	Step: func(state, input, output any) []any {
		ok, next := linStep(state, input, output)
		switch {
		case output.(linOutput).unknown && ok:
			// The worker died during the operation: it took effect, or not.
			return []any{state, next}
		case output.(linOutput).unknown:
			return []any{state}
		case ok:
			return []any{next}
		}
		return nil
	},
	Equal: func(a, b any) bool {
		x, y := a.(linState), b.(linState)
		if !linRecEqual(x.rec, y.rec) || len(x.grants) != len(y.grants) {
			return false
		}
		for k, v := range x.grants {
			if w, ok := y.grants[k]; !ok || w != v {
				return false
			}
		}
		return true
	},
	Hash: func(state any) uint64 {
		st := state.(linState)
		h := uint64(len(st.grants)) << 40
		if r := st.rec; r != nil {
			h ^= uint64(r.State)<<32 ^ uint64(r.Failures)<<16 ^ r.Generation ^ uint64(r.OpenUntil.Unix()) ^ uint64(r.LeaseUntil.Unix())<<8
		}
		return h
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		res := fmt.Sprintf("%+v", out)
		if out.unknown {
			res = "?"
		}
		return fmt.Sprintf("%s %s %s %v @%s -> %s", in.kind, in.ticket, in.outcome, in.op, in.now.Format(time.TimeOnly), res)
	},
	DescribeState: func(state any) string {
		st := state.(linState)
		if st.rec == nil {
			return fmt.Sprintf("none, %d tickets", len(st.grants))
		}
		r := st.rec
		return fmt.Sprintf("%v f=%d g=%d open_until=%s lease_until=%s, %d tickets", r.State, r.Failures, r.Generation,
			r.OpenUntil.Format(time.TimeOnly), r.LeaseUntil.Format(time.TimeOnly), len(st.grants))
	},
}).ToModel()

// linStep is the model's deterministic step: what the operation does
// when it completes.
func linStep(state, input, output any) (bool, any) {
	st, in, out := state.(linState), input.(linInput), output.(linOutput)
	switch in.kind {
	case "allow":
		fresh := func() string { return fmt.Sprintf("%032x", fnv64(in.op)) }
		p := machine.Policy(linPolicy)
		var a machine.Admission
		machine.Admit(st.rec, &p, machine.At(in.now), fresh, &a)
		if !out.unknown {
			if a.Admitted != out.admitted {
				return false, nil
			}
			if a.Admitted && a.Grant.Probe != out.probe {
				return false, nil
			}
			if !a.Admitted && (a.State != out.state || !a.Until.Equal(out.until)) {
				return false, nil
			}
		}
		next := st
		if a.Next != nil {
			next.rec = a.Next
		}
		if a.Admitted {
			next = next.withGrants(func(g map[string]machine.Grant) { g[in.ticket] = a.Grant })
		}
		return true, next
	case "done":
		g, ok := st.grants[in.ticket]
		if !ok {
			return false, nil
		}
		next := st.withGrants(func(g map[string]machine.Grant) { delete(g, in.ticket) })
		p := machine.Policy(linPolicy)
		if rec := machine.Settle(st.rec, in.circuit, &g, machine.Outcome(in.outcome), &p, machine.At(in.now), driver.Counts{}); rec != nil {
			next.rec = rec
		}
		return true, next
	case "snap":
		if out.unknown {
			return true, st
		}
		if st.rec == nil {
			return !out.exists && out.state == circuit.StateClosed && out.gen == 0, st
		}
		// A snapshot reads the state by time: an open record whose cooldown
		// is over is half-open, ready to probe.
		r, state := st.rec, st.rec.State
		if state == circuit.StateOpen && !in.now.Before(r.OpenUntil) {
			state = circuit.StateHalfOpen
		}
		return out.exists && out.state == state && out.failures == r.Failures && out.gen == r.Generation &&
			out.openUntil.Equal(r.OpenUntil) && out.leaseUntil.Equal(r.LeaseUntil), st
	case "clear": // a closed record of a fresh incarnation: no grant before it counts
		fresh := func() string { return fmt.Sprintf("%032x", fnv64(in.op)) }
		return true, linState{rec: machine.Cleared(st.rec, in.circuit, in.now, fresh), grants: st.grants}
	}
	return false, nil
}

func fnv64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

// linChild is a running worker and the operations it reported.
type linChild struct {
	client int
	cmd    *exec.Cmd
	in     io.WriteCloser
	msgs   chan string // "done", or a failure to report
	eof    chan struct{}
	stderr strings.Builder

	mu      sync.Mutex
	ops     []porcupine.Operation
	pending map[string]*porcupine.Operation
	// diedAt is when the parent saw the worker dead (monotonic): whatever
	// its last operation did, it did before then.
	diedAt int64
}

func startLinChild(t *testing.T, dir string, client int, seed uint64) *linChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envRole+"=lin", envLinDir+"="+dir,
		envLinSeed+"="+strconv.FormatUint(seed, 10), envLinID+"="+strconv.Itoa(client))
	c := &linChild{client: client, cmd: cmd, msgs: make(chan string, 16), eof: make(chan struct{}), pending: map[string]*porcupine.Operation{}}
	cmd.Stderr = &c.stderr
	var err error
	if c.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start lin worker: %v", err)
	}
	go c.read(out)
	return c
}

// read parses the worker's reports into operations.
func (c *linChild) read(out io.Reader) {
	defer close(c.eof)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), linLine)
		if !ok {
			continue
		}
		if line == "done" {
			c.msgs <- "done"
			continue
		}
		if err := c.parse(strings.Fields(line)); err != nil {
			c.msgs <- fmt.Sprintf("worker %d: %v in %q", c.client, err, line)
		}
	}
	_, _ = io.Copy(io.Discard, out)
}

func (c *linChild) parse(f []string) error {
	num := func(i int) int64 {
		if i >= len(f) {
			return 0
		}
		n, _ := strconv.ParseInt(f[i], 10, 64)
		return n
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case f[0] == "call" && len(f) == 7:
		// call <op> <kind> <circuit> <ticket> <outcome> <mono>
		o, _ := strconv.Atoi(f[5])
		c.pending[f[1]] = &porcupine.Operation{
			ClientId: c.client,
			Input:    linInput{kind: f[2], circuit: f[3], ticket: f[4], outcome: circuit.Outcome(o), op: f[1]},
			Call:     num(6),
		}
		return nil
	case f[0] == "ret" && len(f) >= 4:
		// ret <op> <result> <mono> <result fields>...
		op := c.pending[f[1]]
		if op == nil {
			return errors.New("a return without a call")
		}
		delete(c.pending, f[1])
		op.Return = num(3)
		var out linOutput
		switch f[2] {
		case "ok":
		case "admitted":
			out.admitted, out.probe = true, num(4) == 1
		case "rejected":
			out.state, out.until = circuit.State(num(4)), timeOrZero(num(5))
		case "snap":
			out.exists, out.state, out.failures, out.gen = num(4) == 1, circuit.State(num(5)), int(num(6)), uint64(num(7))
			out.openUntil, out.leaseUntil = timeOrZero(num(8)), timeOrZero(num(9))
		default:
			return fmt.Errorf("operation %s failed: %s", f[1], strings.Join(f[4:], " "))
		}
		op.Output = out
		c.ops = append(c.ops, *op)
		return nil
	}
	return errors.New("malformed report")
}

// history returns the worker's operations; with killed, its operation in
// flight is included with an unknown outcome, returning when the worker was
// seen dead: a dead process changes nothing, so the operation's effect, if
// any, lies between its call and then. (An unbounded return would let it
// take effect at any later point, and the search would blow up.)
func (c *linChild) history(now time.Time, killed bool) []porcupine.Operation {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops := c.ops
	for _, op := range c.pending {
		if !killed {
			continue
		}
		in := op.Input.(linInput)
		in.now = now
		op.Input = in
		op.Output = linOutput{unknown: true}
		op.Return = c.diedAt
		ops = append(ops, *op)
	}
	return ops
}

func TestLinearizability(t *testing.T) {
	workers, target, opsPerPhase := 8, 10_000, 15
	if testing.Short() && !soakMode() {
		target, opsPerPhase = 3000, 15
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d: %d workers, phases of %d operations each, until %d operations", seed, workers, opsPerPhase, target)
	rng := rand.New(rand.NewPCG(seed, 3))
	dir := filepath.Join(t.TempDir(), "state")

	var all []*linChild
	defer func() {
		for _, c := range all {
			_ = c.in.Close()
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	}()
	nextClient := 0
	spawn := func() *linChild {
		c := startLinChild(t, dir, nextClient, rng.Uint64())
		nextClient++
		all = append(all, c)
		return c
	}
	live := make([]*linChild, workers)
	for i := range live {
		live[i] = spawn()
	}

	// Each worker's operations are stamped with their phase's time once the
	// phase is over.
	var history []porcupine.Operation
	stamped := map[*linChild]int{}
	stamp := func(c *linChild, now time.Time, killed bool) {
		ops := c.history(now, killed)
		for _, op := range ops[stamped[c]:] {
			in := op.Input.(linInput)
			in.now = now
			op.Input = in
			history = append(history, op)
		}
		stamped[c] = len(ops)
	}

	start := time.Now()
	now := linBase
	kills := 0
	p := 0
	for ; len(history) < target; p++ {
		now = now.Add(linSteps[rng.IntN(len(linSteps))])
		cmd := fmt.Sprintf("phase %d %d\n", now.UnixNano(), opsPerPhase)
		for _, c := range live {
			if _, err := io.WriteString(c.in, cmd); err != nil {
				t.Fatalf("phase %d: worker %d: %v; stderr:\n%s", p, c.client, err, c.stderr.String())
			}
		}
		victim := -1
		if rng.IntN(4) == 0 {
			victim = rng.IntN(workers)
			time.Sleep(time.Duration(rng.IntN(20000)) * time.Microsecond)
			_ = live[victim].cmd.Process.Signal(syscall.SIGKILL)
			_ = live[victim].cmd.Wait()
			<-live[victim].eof
			live[victim].mu.Lock()
			live[victim].diedAt = monotonic()
			live[victim].mu.Unlock()
			kills++
		}
		for i, c := range live {
			if i == victim {
				continue
			}
			select {
			case msg := <-c.msgs:
				if msg != "done" {
					t.Fatalf("phase %d: %s", p, msg)
				}
			case <-c.eof:
				t.Fatalf("phase %d: worker %d ended; stderr:\n%s", p, c.client, c.stderr.String())
			case <-time.After(time.Minute):
				t.Fatalf("phase %d: worker %d did not finish within a minute", p, c.client)
			}
		}
		for i, c := range live {
			stamp(c, now, i == victim)
		}
		if victim >= 0 {
			live[victim] = spawn()
		}
	}
	ran := time.Since(start)

	var unknown, probes, rejected, snaps, overlapping int
	for _, op := range history {
		out := op.Output.(linOutput)
		switch in := op.Input.(linInput); {
		case out.unknown:
			unknown++
		case in.kind == "allow" && out.probe:
			probes++
		case in.kind == "allow" && !out.admitted:
			rejected++
		case in.kind == "snap":
			snaps++
		}
	}
	// How concurrent the run was: operations overlapping in time with
	// another process's operation on the same circuit.
	for _, part := range linModel.Partition(history) {
		for i, a := range part {
			for j, b := range part {
				if i != j && a.ClientId != b.ClientId && a.Call <= b.Return && b.Call <= a.Return {
					overlapping++
					break
				}
			}
		}
	}
	t0 := time.Now()
	res, info := porcupine.CheckOperationsVerbose(linModel, history, 5*time.Minute)
	checked := time.Since(t0)
	t.Logf("%d operations in %d phases (%d probes admitted, %d calls rejected, %d snapshots; %d overlapping another process's on the same circuit) "+
		"by %d processes (%d SIGKILLed, %d operations of unknown outcome) in %v; porcupine: %s in %v",
		len(history), p, probes, rejected, snaps, overlapping, nextClient, kills, unknown, ran.Round(time.Millisecond), res, checked.Round(time.Millisecond))
	if res != porcupine.Ok {
		path := filepath.Join(os.TempDir(), fmt.Sprintf("circuitgen-linearizability-%d.html", seed))
		if err := porcupine.VisualizePath(linModel, info, path); err != nil {
			t.Logf("visualization: %v", err)
		}
		t.Fatalf("the history is %s (visualization: %s)", res, path)
	}

	// The check has teeth: one snapshot that reports an impossible failure
	// count makes the history illegal.
	for i, op := range history {
		if out := op.Output.(linOutput); op.Input.(linInput).kind == "snap" && !out.unknown && out.exists {
			out.failures = 777
			bad := append([]porcupine.Operation(nil), history...)
			bad[i].Output = out
			if res := porcupine.CheckOperationsTimeout(linModel, bad, time.Minute); res != porcupine.Illegal {
				t.Fatalf("a history with a snapshot of 777 failures is %s, want Illegal", res)
			}
			break
		}
	}
}
