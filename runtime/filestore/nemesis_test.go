//go:build linux

package filestore

// The nemesis test, in the spirit of Jepsen's nemesis and etcd's
// failpoints: worker processes (nemesis_worker_test.go) make guarded calls
// on a few circuits in one state directory while a nemesis
// (nemesis_fault_test.go) injects, at random, the faults of a hostile
// server: fd exhaustion in a worker, a full filesystem, SIGKILL and
// SIGSTOP of workers, permission flips; and acts outside the store's model,
// checked against their bounds (docs/file-store.md): a damaged or removed
// change index, removed records, the index rolled back in place, the state
// directory removed or moved aside and made anew. Then the faults stop and every worker makes one
// call and reads every circuit. The checker (nemesis_check_test.go) reads
// the workers' histories and reports every call admitted on a circuit that
// was durably open or held by a probe, every process that died of a signal
// the nemesis did not send, and every process that saw another state than
// the others after the faults stopped.
//
// As root, the state directory is in a small tmpfs of its own (so that it
// can be filled) and the workers run as nobody (uid 65534), owning it, so
// that permission flips bite; without root, the tmpfs and ownership faults are
// left out, and the test fails instead when CI=true.
//
//	go test ./runtime/filestore/ -run TestNemesis -v            20s of faults (10s with -short)
//	make nemesis                                                 10 minutes (NEMESIS=5m to change)
//
// CIRCUITGEN_NEMESIS=<duration> sets how long the faults go on, and
// CIRCUITGEN_NEMESIS_FAULTS=kind,... limits them to some kinds (sigkill,
// sigstop, nofile, full, index, records, perm, owner, rollback, dir;
// "none" for a
// run without faults), to find which fault causes a violation. Without it
// every kind is injected. A failed run keeps the workers' histories and the
// faults injected in its artifact directory (go test -artifacts).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// nemesisWorkers is how many worker processes run at once.
const nemesisWorkers = 4

// nobody is the unprivileged user the workers run as when the test is root.
const nobody = 65534

// nemesisDuration is how long the faults go on.
func nemesisDuration(t *testing.T) time.Duration {
	if v := os.Getenv("CIRCUITGEN_NEMESIS"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("CIRCUITGEN_NEMESIS=%q: want a positive duration", v)
		}
		return d
	}
	if testing.Short() {
		return 10 * time.Second
	}
	return 20 * time.Second
}

// nemesisKinds returns the fault kinds to inject: every kind, or those of
// CIRCUITGEN_NEMESIS_FAULTS.
func nemesisKinds(t *testing.T) map[string]bool {
	kinds := map[string]bool{}
	for _, f := range nemFaults {
		kinds[f.kind] = true
	}
	v := os.Getenv("CIRCUITGEN_NEMESIS_FAULTS")
	if v == "" || v == "all" {
		return kinds
	}
	only := map[string]bool{}
	for _, k := range strings.Split(v, ",") {
		if k != "none" && !kinds[k] {
			t.Fatalf("CIRCUITGEN_NEMESIS_FAULTS: unknown fault kind %q", k)
		}
		only[k] = k != "none"
	}
	return only
}

// nemChild is a worker process.
type nemChild struct {
	id      string
	cmd     *exec.Cmd
	in      io.WriteCloser
	msgs    chan string
	exited  chan struct{} // closed once reaped
	waitErr error
	stderr  lockedStderr
	hist    string

	stopped bool // SIGSTOPped and not yet continued
	killed  bool // the nemesis sent it SIGKILL
	quit    bool // it hung and was sent SIGQUIT, already a violation
	judged  bool // its end was judged
	closing bool // its stdin was closed: it must exit 0
}

// lockedStderr collects a worker's standard error.
type lockedStderr struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedStderr) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() < 64<<10 {
		b.buf.Write(p)
	}
	return len(p), nil
}

func (b *lockedStderr) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// excerpt returns the lines of a dead worker's stderr that say why.
func (c *nemChild) excerpt() string {
	var keep []string
	for _, l := range strings.Split(c.stderr.String(), "\n") {
		if strings.Contains(l, "fatal") || strings.Contains(l, "signal") || strings.Contains(l, "panic") ||
			strings.Contains(l, "nemesis worker") || strings.Contains(l, "DATA RACE") || strings.Contains(l, "unexpected") {
			keep = append(keep, strings.TrimSpace(l))
		}
		if len(keep) == 4 {
			break
		}
	}
	return strings.Join(keep, " | ")
}

// nemEnv is where a run happens.
type nemEnv struct {
	base, hist, binary string
	mnt                string // the state directory's parent: a tmpfs as root
	state              string
	cred               *syscall.Credential // the workers' user, nil: this one
	tmpfs              bool
}

// setupNemesis makes the directories of a run. As root: a tmpfs of its
// own holding the state directory, both owned by nobody, and a copy of the
// test binary nobody can run.
func setupNemesis(t *testing.T) nemEnv {
	t.Helper()
	base, err := os.MkdirTemp("", "circuitgen-nemesis-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := nemEnv{base: base, mnt: base, state: filepath.Join(base, "state"), hist: filepath.Join(base, "history"), binary: self}
	if err := os.Mkdir(env.hist, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the nemesis needs root (a tmpfs to fill, workers of another user for permission flips); CI=true")
		}
		t.Log("not root: no tmpfs, no ownership faults; the workers run as this user")
		return env
	}
	env.cred = &syscall.Credential{Uid: nobody, Gid: nobody}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(env.hist, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	env.binary = filepath.Join(base, "filestore.test")
	if err := copyExecutable(self, env.binary); err != nil {
		t.Fatal(err)
	}
	mkState := func() {
		if err := os.Mkdir(env.state, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(env.state, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	mnt := filepath.Join(base, "fs")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	err = syscall.Mount("tmpfs", mnt, "tmpfs", 0, fmt.Sprintf("size=1m,mode=0700,uid=%d,gid=%d", nobody, nobody))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a tmpfs for the state directory: %v; CI=true", err)
		}
		t.Logf("no tmpfs (%v): the full-filesystem fault is left out", err)
		mkState()
		return env
	}
	env.tmpfs, env.mnt, env.state = true, mnt, filepath.Join(mnt, "state")
	t.Cleanup(func() {
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	mkState()
	return env
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// start starts a worker and waits until it is ready for commands.
func (env nemEnv) start(t *testing.T, id string, seed uint64) *nemChild {
	t.Helper()
	c := &nemChild{id: id, msgs: make(chan string, 64), exited: make(chan struct{}), hist: filepath.Join(env.hist, id)}
	c.cmd = exec.Command(env.binary, "-test.run=^TestHelperProcessNemesis$", "-test.count=1")
	c.cmd.Env = append(os.Environ(), envNemRole+"=worker", envNemDir+"="+env.state, envNemHist+"="+c.hist,
		envNemID+"="+id, envNemSeed+"="+strconv.FormatUint(seed, 10))
	c.cmd.Dir = env.base
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: env.cred, Pdeathsig: syscall.SIGKILL}
	c.cmd.Stderr = &c.stderr
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start nemesis worker: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if msg, ok := strings.CutPrefix(sc.Text(), nemLine); ok {
				c.msgs <- msg
			}
		}
		_, _ = io.Copy(io.Discard, out)
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	}()
	if msg := c.recv(t, 30*time.Second); msg != "ready" {
		t.Fatalf("worker %s said %q, want ready; stderr:\n%s", id, msg, c.stderr.String())
	}
	return c
}

// recv returns the worker's next message, or "" when it ended or did not
// say anything within d.
func (c *nemChild) recv(t *testing.T, d time.Duration) string {
	t.Helper()
	select {
	case msg := <-c.msgs:
		return msg
	case <-c.exited:
		select {
		case msg := <-c.msgs:
			return msg
		default:
		}
		return ""
	case <-time.After(d):
		return ""
	}
}

func (c *nemChild) send(line string) {
	_, _ = io.WriteString(c.in, line+"\n") // a dead worker is found by its exit
}

// status describes how a reaped worker ended.
func (c *nemChild) status() (signal syscall.Signal, code int) {
	var ee *exec.ExitError
	if !errors.As(c.waitErr, &ee) {
		return 0, 0
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return ws.Signal(), -1
	}
	return 0, ws.ExitStatus()
}

// deathViolation judges how a reaped worker ended: by the nemesis's
// SIGKILL, or with status 0 after its input was closed; anything else is a
// violation.
func (c *nemChild) deathViolation() *nViolation {
	sig, code := c.status()
	switch {
	case c.quit, c.killed && sig == syscall.SIGKILL:
		return nil
	case c.closing && !c.killed && sig == 0 && code == 0:
		return nil
	case sig != 0:
		return &nViolation{kind: "died", detail: fmt.Sprintf("worker %s died of %v, which the nemesis did not send: %s", c.id, sig, c.excerpt())}
	}
	return &nViolation{kind: "died", detail: fmt.Sprintf("worker %s exited with status %d: %s", c.id, code, c.excerpt())}
}

func TestNemesis(t *testing.T) {
	if os.Getenv(envNemRole) != "" {
		t.Skip("a nemesis worker")
	}
	duration := nemesisDuration(t)
	env := setupNemesis(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d: %d workers, %v of faults; state directory %s (tmpfs: %v, workers' user: %v)",
		seed, nemesisWorkers, duration, env.state, env.tmpfs, env.cred != nil)
	n := newNemesis(t, env, seed)
	n.kinds = nemesisKinds(t)
	defer n.cleanup()

	for range nemesisWorkers {
		n.live = append(n.live, n.spawn(""))
	}
	if env.tmpfs && n.kinds["full"] {
		// The first records are written into a filesystem with room for them
		// but not for the change index.
		n.fill(32 << 10)
	}
	for _, c := range n.live {
		c.send("go")
	}
	n.run(duration)
	n.quiesce()
	n.final()

	ops := n.histories(n.all)
	found, excused := checkHistory(ops, n.log, nemPolicy)
	n.report(ops, append(n.violations, found...), excused)
}

// histories reads and parses the histories of workers.
func (n *nemesis) histories(workers []*nemChild) []*nOp {
	var ops []*nOp
	for _, c := range workers {
		f, err := os.Open(c.hist)
		if err != nil {
			n.t.Fatalf("history of worker %s: %v", c.id, err)
		}
		got, err := parseHistory(f)
		_ = f.Close()
		if err != nil {
			n.t.Fatalf("history of worker %s: %v", c.id, err)
		}
		ops = append(ops, got...)
	}
	return ops
}

// report prints the run's figures: faults injected by kind, operations,
// admissions excused by a stale copy, violations; and fails the test with
// each violation (the first 20).
func (n *nemesis) report(ops []*nOp, violations []nViolation, excused int) {
	t := n.t
	st := historyStats(ops)
	var faults []string
	total := 0
	for _, k := range slices.Sorted(maps.Keys(n.faults)) {
		faults = append(faults, fmt.Sprintf("%s %d", k, n.faults[k]))
		total += n.faults[k]
	}
	byKind := map[string]int{}
	for _, v := range violations {
		byKind[v.kind]++
	}
	t.Logf("faults injected: %d (%s)", total, strings.Join(faults, ", "))
	t.Logf("operations: %d guarded calls by %d processes (%d admitted, %d of them probes; %d rejected as open; "+
		"%d StateErrors, %d timeouts), %d snapshots, %d clears, %d transitions; anchors of the store's clock seen %v apart",
		st.calls, len(n.all), st.admitted, st.probes, st.rejected, st.stateErrors, st.ctxErrors, st.snapshots, st.clears,
		st.transitions, time.Duration(st.anchors))
	_, failed := failedWrites(ops, n.log.unwritable, nil)
	t.Logf("%d writes failed while the directory was unwritable (%d spans); Open refused the directory %d times",
		failed, len(n.log.unwritable), st.opensRefused)
	t.Logf("%d admissions on a copy the change index no longer vouched for, within recheck of a rollback or a replaced directory (%d of them)",
		excused, len(n.log.stale))
	t.Logf("violations: %d %v", len(violations), byKind)
	if near := n.preceding(violations, 3*time.Second); near != "" {
		t.Logf("faults in the 3s before the timed violations: %s", near)
	}
	if len(violations) > 0 {
		n.keepHistories()
	}
	for i, v := range violations {
		if i == 20 {
			t.Errorf("... and %d more", len(violations)-i)
			break
		}
		if v.at != 0 {
			t.Errorf("%v\n\tfaults injected in the 3s before: %s", v, n.before(v.at, 3*time.Second))
		} else {
			t.Errorf("%v", v)
		}
	}
}

// keepHistories copies the workers' histories and the faults injected into
// the test's artifact directory, kept with go test -artifacts, to read what
// led to a violation.
func (n *nemesis) keepHistories() {
	dir := n.t.ArtifactDir()
	for _, c := range n.all {
		if data, err := os.ReadFile(c.hist); err == nil {
			_ = os.WriteFile(filepath.Join(dir, c.id), data, 0o644)
		}
	}
	var faults strings.Builder
	for _, e := range n.events {
		fmt.Fprintf(&faults, "%d %s\n", e.boot, e.kind)
	}
	_ = os.WriteFile(filepath.Join(dir, "faults"), []byte(faults.String()), 0o644)
	n.t.Logf("histories kept in %s", dir)
}

// nemesis is the state of a run: the workers, the faults in force and
// what they did.
type nemesis struct {
	t          *testing.T
	env        nemEnv
	rng        *rand.Rand
	live, all  []*nemChild
	next       int
	undo       []nemUndo
	active     map[string]bool // fault kinds in force
	faults     map[string]int  // faults injected, by kind
	log        nFaultLog
	events     []nemEvent // faults injected, in order
	violations []nViolation
	kinds      map[string]bool // fault kinds to inject
	enabled    []nemFault
	quiet      int64 // boot time from which no fault is in force and every deadline has passed
	// earlier is how far the nemesis moved the clock's anchor earlier in
	// all: processes take an earlier anchor, so deadlines recorded before
	// end late by up to that much (never early), and a circuit may still be
	// open when the final calls are made.
	earlier time.Duration
}

// nemEvent is a fault injected at a boot time.
type nemEvent struct {
	boot int64
	kind string
}

// before describes the faults injected within d before boot time at, to
// tell which fault a violation followed.
func (n *nemesis) before(at int64, d time.Duration) string {
	var near []string
	for _, e := range n.events {
		if e.boot <= at && at-e.boot <= int64(d) {
			near = append(near, fmt.Sprintf("%s %v before", e.kind, time.Duration(at-e.boot).Round(time.Millisecond)))
		}
	}
	if len(near) == 0 {
		return "none"
	}
	return strings.Join(near, "; ")
}

// preceding attributes the violations with a time to the faults injected
// within d before each: greedily, the kind that most of them followed,
// then among the others the kind that most of those followed, and so on.
// A kind that every violation followed is the likely cause.
func (n *nemesis) preceding(violations []nViolation, d time.Duration) string {
	var left []map[string]bool // per timed violation: the kinds it followed
	for _, v := range violations {
		if v.at == 0 {
			continue
		}
		kinds := map[string]bool{}
		for _, e := range n.events {
			if e.boot <= v.at && v.at-e.boot <= int64(d) {
				kinds[e.kind] = true
			}
		}
		left = append(left, kinds)
	}
	timed := len(left)
	var out []string
	for len(left) > 0 {
		tally := map[string]int{}
		for _, kinds := range left {
			for k := range kinds {
				tally[k]++
			}
		}
		if len(tally) == 0 {
			out = append(out, fmt.Sprintf("no fault %d", len(left)))
			break
		}
		best := slices.MaxFunc(slices.Sorted(maps.Keys(tally)), func(a, b string) int { return tally[a] - tally[b] })
		out = append(out, fmt.Sprintf("%s %d", best, tally[best]))
		left = slices.DeleteFunc(left, func(kinds map[string]bool) bool { return kinds[best] })
	}
	if timed == 0 {
		return ""
	}
	return fmt.Sprintf("%d timed: %s", timed, strings.Join(out, ", then "))
}

// nemUndo ends a fault at a time.
type nemUndo struct {
	at   time.Time
	kind string
	do   func()
}

func newNemesis(t *testing.T, env nemEnv, seed uint64) *nemesis {
	return &nemesis{t: t, env: env, rng: rand.New(rand.NewPCG(seed, 11)), active: map[string]bool{}, faults: map[string]int{}}
}

// spawn starts a worker; with limit, its fd limit is set before it first
// touches the store.
func (n *nemesis) spawn(limit string) *nemChild {
	n.next++
	c := n.env.start(n.t, "w"+strconv.Itoa(n.next), n.rng.Uint64())
	if limit != "" {
		c.send("limit " + limit)
	}
	n.all = append(n.all, c)
	return c
}

func (n *nemesis) cleanup() {
	for _, c := range n.all {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.exited
	}
}

// later schedules the end of a fault of kind, in force until then.
func (n *nemesis) later(d time.Duration, kind string, do func()) {
	n.active[kind] = true
	n.undo = append(n.undo, nemUndo{at: time.Now().Add(d), kind: kind, do: do})
}

// endFaults ends the faults due by now (all of them with all).
func (n *nemesis) endFaults(all bool) {
	now := time.Now()
	keep := n.undo[:0]
	var due []nemUndo
	for _, u := range n.undo {
		if all || !u.at.After(now) {
			due = append(due, u)
		} else {
			keep = append(keep, u)
		}
	}
	n.undo = keep
	for _, u := range due {
		u.do()
		delete(n.active, u.kind)
	}
}

// reap judges how each worker that ended did (nemChild.deathViolation),
// once, and starts a new worker in the place of each live one that ended.
func (n *nemesis) reap() {
	for _, c := range n.all {
		select {
		case <-c.exited:
		default:
			continue
		}
		if !c.judged {
			c.judged = true
			if v := c.deathViolation(); v != nil {
				n.violations = append(n.violations, *v)
			}
		}
		if i := slices.Index(n.live, c); i >= 0 {
			n.live[i] = n.spawn("")
			n.live[i].send("go")
		}
	}
}

// run injects faults at random for d.
func (n *nemesis) run(d time.Duration) {
	for _, f := range nemFaults {
		if n.kinds[f.kind] {
			n.enabled = append(n.enabled, f)
		}
	}
	if len(n.enabled) == 0 {
		time.Sleep(d)
		return
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(50+n.rng.IntN(250)) * time.Millisecond)
		n.endFaults(false)
		n.reap()
		f := n.enabled[n.rng.IntN(len(n.enabled))]
		// A directory replaced while read-only would end the span in which
		// no write can succeed early (log.unwritable).
		if n.active[f.kind] || (f.needsRoot && n.env.cred == nil) || (f.kind == "full" && !n.env.tmpfs) || (f.kind == "dir" && n.active["perm"]) {
			continue
		}
		// One stale fault at a time: while one's excuse holds (nStale),
		// another's would hide a copy used past the recheck.
		if f.stale && (n.active["rollback"] || len(n.log.stale) > 0 && bootNanos() < n.log.stale[len(n.log.stale)-1].until) {
			continue
		}
		f.inject(n)
	}
}

// quiesce ends every fault, lets stopped workers go on, and stops every
// worker's calls: the live ones', and those of workers told to exit, which
// finish their calls in progress first.
func (n *nemesis) quiesce() {
	n.endFaults(true)
	n.reap()
	for _, c := range n.all {
		if slices.Contains(n.live, c) {
			continue
		}
		n.awaitExit(c)
	}
	for _, c := range n.live {
		c.send("stop")
	}
	for _, c := range n.live {
		if msg := c.recv(n.t, 30*time.Second); msg != "stopped" {
			n.violations = append(n.violations, nViolation{kind: "hung", detail: fmt.Sprintf("worker %s did not finish its calls within 30s after the faults stopped (said %q)", c.id, msg)})
			_ = c.cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, on its stderr
			c.quit = true
			<-c.exited
			n.t.Logf("worker %s's goroutines:\n%s", c.id, c.stderr.String())
		}
	}
}

// retryAfter reads the Retry-After of a call rejected as open from its
// message.
func retryAfter(op *nOp) (time.Duration, bool) {
	_, after, ok := strings.Cut(op.msg, "retry after ")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(strings.Fields(after)[0])
	return d, err == nil
}

// finalCalls judges the final calls of worker id, its ops made after boot
// time quiet, when no fault was in force and every deadline had passed:
// each must succeed, or be rejected as open no longer than the cooldown plus
// earlier (the nemesis's earlier anchors end deadlines late), or have found
// the index damaged and replaced it, failing closed, with another call on
// its circuit after it, which is judged the same way. It returns what to
// log, and the calls that show a store that did not recover.
func finalCalls(id string, ops []*nOp, quiet int64, earlier time.Duration) (notes []string, out []nViolation) {
	for i, op := range ops {
		if op.kind != "allow" || op.call <= quiet || op.admitted && op.result == "ok" {
			continue
		}
		if repairedIndex(op) && slices.ContainsFunc(ops[i+1:], func(o *nOp) bool { return o.kind == "allow" && o.circuit == op.circuit }) {
			notes = append(notes, fmt.Sprintf("worker %s's final call on %s found the index damaged and replaced it, failing closed: %s", id, op.circuit, op.msg))
			continue
		}
		if late, ok := retryAfter(op); ok && op.result == "open:open" && late <= earlier+nemPolicy.Cooldown {
			notes = append(notes, fmt.Sprintf("worker %s's final call on %s: still open for %v, a deadline recorded before the anchor moved %v earlier", id, op.circuit, late, earlier))
			continue
		}
		out = append(out, nViolation{kind: "not recovered", detail: fmt.Sprintf("worker %s's final call on %s: %s %s", id, op.circuit, op.result, op.msg)})
	}
	return notes, out
}

// repairedIndex reports whether op failed closed because it found the change
// index damaged and replaced it: the damage rule (docs/file-store.md,
// Repairs), not a store that failed to recover.
func repairedIndex(op *nOp) bool {
	return strings.HasPrefix(op.result, "state:") && strings.Contains(op.msg, "is damaged") &&
		strings.Contains(op.msg, "replaced it with a new one; this call fails closed")
}

// awaitExit waits for a worker told to exit (its input closed) to do so;
// one that does not within 30s is hung, and is sent SIGQUIT.
func (n *nemesis) awaitExit(c *nemChild) {
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		n.violations = append(n.violations, nViolation{kind: "hung", detail: fmt.Sprintf("worker %s did not exit within 30s of its input's end", c.id)})
		_ = c.cmd.Process.Signal(syscall.SIGQUIT)
		c.quit = true
		<-c.exited
	}
}

// final has every worker make one call on each circuit in turn, once every
// cooldown and lease any worker can have recorded has ended, then read
// every circuit; a fresh process reads them too. Every call must succeed
// and every process must read the same state.
func (n *nemesis) final() {
	t := n.t
	time.Sleep(nemPolicy.Cooldown + nemPolicy.ProbeLease + 100*time.Millisecond)
	n.quiet = bootNanos()
	var live []*nemChild
	for _, c := range n.live {
		select {
		case <-c.exited:
			continue
		default:
		}
		live = append(live, c)
	}
	fresh := n.spawn("")
	for _, c := range live {
		c.send("final call")
		if msg := c.recv(t, 30*time.Second); msg != "called" {
			n.violations = append(n.violations, nViolation{kind: "not recovered", detail: fmt.Sprintf("worker %s's final calls did not return (said %q)", c.id, msg)})
		}
	}
	views := map[string][]string{} // circuit → "worker: what it read"
	for _, c := range append(live, fresh) {
		c.send("final snap")
		for range nemCircuits {
			msg := c.recv(t, 30*time.Second)
			f := strings.SplitN(msg, " ", 7)
			if len(f) != 7 || f[0] != "snap" {
				n.violations = append(n.violations, nViolation{kind: "not recovered", detail: fmt.Sprintf("worker %s's final snapshot: %q", c.id, msg)})
				break
			}
			views[f[1]] = append(views[f[1]], c.id+": "+strings.Join(f[2:], " "))
		}
	}
	for _, c := range append(live, fresh) {
		c.closing = true
		_ = c.in.Close()
		n.awaitExit(c)
	}
	n.live = nil
	n.reap()
	// The final calls' own results are in the histories: any but success,
	// once no fault is in force and every deadline has passed, is a store
	// that did not recover.
	for _, c := range append(live, fresh) {
		notes, found := finalCalls(c.id, n.histories([]*nemChild{c}), n.quiet, n.earlier)
		for _, note := range notes {
			t.Log(note)
		}
		n.violations = append(n.violations, found...)
	}
	for _, name := range nemCircuits {
		v := views[name]
		for _, w := range v[1:] {
			if _, a, _ := strings.Cut(w, ": "); a != strings.SplitN(v[0], ": ", 2)[1] {
				n.violations = append(n.violations, nViolation{kind: "views differ", detail: fmt.Sprintf("%s after one call each: %s", name, strings.Join(v, "; "))})
				break
			}
		}
		t.Logf("final view of %s: %s", name, v[0])
	}
}
