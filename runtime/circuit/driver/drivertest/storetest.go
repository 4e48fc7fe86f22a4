package drivertest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Config describes the store under test.
type Config struct {
	// Open returns a new, empty store. It is called once per subtest;
	// cleanup belongs in t.Cleanup. It is required.
	Open func(t *testing.T) driver.Store

	// Corrupt, when not nil, replaces the record stored for name in s with
	// one that s cannot trust, so that s.Load must report an error wrapping
	// driver.ErrCorrupt. It is called only when s holds a valid record for
	// name. Corruption is store-specific (truncated bytes in a file, a bad
	// value in a row), hence the hook; without it the corrupt-record
	// subtests are not run.
	Corrupt func(t *testing.T, s driver.Store, name string)

	// RefuseWrites, when not nil, makes s refuse every write (Replace and
	// Delete fail with an error other than ErrConflict) while it still
	// reads, as a read-only database, a replica or a full disk does, until
	// the returned function is called. The way is store-specific, hence the
	// hook; without it the refused-write subtest is not run.
	RefuseWrites func(t *testing.T, s driver.Store) (restore func())
}

// Run runs the conformance suite against the store that cfg describes, each
// check in its own subtest with a fresh store from cfg.Open.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.Open == nil {
		t.Fatal("drivertest: Config.Open is nil")
	}
	tests := []subtest{
		{"LoadAbsent", testLoadAbsent},
		{"ReplaceCreates", testReplaceCreates},
		{"ReplaceUpdates", testReplaceUpdates},
		{"StaleSwapRefused", testStaleSwapRefused},
		{"ConcurrentSwapsLoseNoUpdate", testConcurrentSwaps},
		{"Delete", testDelete},
		{"ReplaceAfterDeleteRefused", testReplaceAfterDelete},
		{"BreakerOpensAndRecovers", testBreakerOpensAndRecovers},
		{"BreakerOneProbe", testBreakerOneProbe},
	}
	if _, ok := cfg.Open(t).(driver.WindowSharer); ok {
		tests = append(tests,
			subtest{"ShareWindow", testShareWindow},
			subtest{"SkewedFlush", testSkewedFlush},
		)
	}
	if cfg.Corrupt != nil {
		tests = append(tests,
			subtest{"CorruptLoad", testCorruptLoad},
			subtest{"CorruptBreaker", testCorruptBreaker},
		)
	} else {
		t.Log("drivertest: Config.Corrupt is nil; corrupt-record checks not run")
	}
	if cfg.RefuseWrites != nil {
		tests = append(tests, subtest{"RefusedWriteFailsClosed", testRefusedWrite})
	} else {
		t.Log("drivertest: Config.RefuseWrites is nil; the refused-write check not run")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, cfg) })
	}
}

// subtest is one named check of the suite.
type subtest struct {
	name string
	fn   func(*testing.T, Config)
}

// circuitName is the circuit every subtest uses.
const circuitName = "storetest-circuit"

// base is the time of the suite's records: whole milliseconds, UTC.
var base = time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)

// closedRecord returns a valid first revision of a closed record.
func closedRecord(t *testing.T) *driver.Record {
	return &driver.Record{
		Name: circuitName, State: circuit.StateClosed, Generation: 1,
		Incarnation: driver.NewID(), Version: 1, UpdatedAt: base,
	}
}

// successor returns the next revision of r with fn applied to it.
func successor(r *driver.Record, fn func(*driver.Record)) *driver.Record {
	next := *r
	next.Version++
	next.UpdatedAt = next.UpdatedAt.Add(time.Millisecond)
	if fn != nil {
		fn(&next)
	}
	return &next
}

// diff describes how got differs from want, or returns "" when they are the
// same record (times compared with time.Time.Equal).
func diff(got, want *driver.Record) string {
	if got == nil || want == nil {
		if got == want {
			return ""
		}
		return fmt.Sprintf("got %+v, want %+v", got, want)
	}
	var d []string
	check := func(field string, ok bool, g, w any) {
		if !ok {
			d = append(d, fmt.Sprintf("%s = %v, want %v", field, g, w))
		}
	}
	check("Name", got.Name == want.Name, got.Name, want.Name)
	check("State", got.State == want.State, got.State, want.State)
	check("Failures", got.Failures == want.Failures, got.Failures, want.Failures)
	check("Generation", got.Generation == want.Generation, got.Generation, want.Generation)
	check("Incarnation", got.Incarnation == want.Incarnation, got.Incarnation, want.Incarnation)
	check("Version", got.Version == want.Version, got.Version, want.Version)
	check("OpenUntil", got.OpenUntil.Equal(want.OpenUntil), got.OpenUntil, want.OpenUntil)
	check("ProbeToken", got.ProbeToken == want.ProbeToken, got.ProbeToken, want.ProbeToken)
	check("LeaseUntil", got.LeaseUntil.Equal(want.LeaseUntil), got.LeaseUntil, want.LeaseUntil)
	check("UpdatedAt", got.UpdatedAt.Equal(want.UpdatedAt), got.UpdatedAt, want.UpdatedAt)
	check("Successes", got.Successes == want.Successes, got.Successes, want.Successes)
	check("Reopens", got.Reopens == want.Reopens, got.Reopens, want.Reopens)
	check("Forced", got.Forced == want.Forced, got.Forced, want.Forced)
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprint(d)
}

// mustLoad loads circuitName from s and fails the test on an error.
func mustLoad(t *testing.T, s driver.Store) *driver.Record {
	t.Helper()
	rec, _, err := s.Load(t.Context(), circuitName)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return rec
}

// wantStored fails the test unless s holds want (nil: no record).
func wantStored(t *testing.T, s driver.Store, want *driver.Record) {
	t.Helper()
	if d := diff(mustLoad(t, s), want); d != "" {
		t.Fatalf("stored record: %s", d)
	}
}

func mustReplace(t *testing.T, s driver.Store, prev, next *driver.Record) {
	t.Helper()
	if err := s.Replace(t.Context(), circuitName, prev, next); err != nil {
		t.Fatalf("Replace(v%d → v%d): %v", version(prev), version(next), err)
	}
}

func version(r *driver.Record) uint64 {
	if r == nil {
		return 0
	}
	return r.Version
}

func testLoadAbsent(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	// The time Load returns is not checked: a store on the local clock
	// returns the zero Time.
	rec, _, err := s.Load(t.Context(), circuitName)
	if err != nil {
		t.Fatalf("Load of an absent record: %v", err)
	}
	if rec != nil {
		t.Fatalf("Load of an absent record = %+v, want nil", rec)
	}
}

func testReplaceCreates(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	rec := closedRecord(t)
	mustReplace(t, s, nil, rec)
	wantStored(t, s, rec)
}

func testReplaceUpdates(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	revs := []*driver.Record{closedRecord(t)}
	last := func() *driver.Record { return revs[len(revs)-1] }
	// Every state and every optional field round-trips.
	revs = append(revs, successor(last(), func(r *driver.Record) { r.Failures = 2 }))
	revs = append(revs, successor(last(), func(r *driver.Record) {
		r.Failures = 3
		r.State = circuit.StateOpen
		r.OpenUntil = r.UpdatedAt.Add(30 * time.Second)
	}))
	revs = append(revs, successor(last(), func(r *driver.Record) {
		r.State = circuit.StateHalfOpen
		r.ProbeToken = driver.NewID()
		r.LeaseUntil = r.UpdatedAt.Add(10 * time.Second)
	}))
	revs = append(revs, successor(last(), func(r *driver.Record) {
		r.Successes = 1 // between two probes of a run
		r.ProbeToken, r.LeaseUntil = "", time.Time{}
	}))
	revs = append(revs, successor(last(), func(r *driver.Record) {
		r.State = circuit.StateOpen
		r.Successes, r.Reopens = 0, 2
		r.OpenUntil = r.UpdatedAt.Add(time.Minute)
	}))
	revs = append(revs, successor(last(), func(r *driver.Record) { // ForceOpen
		r.OpenUntil = r.UpdatedAt.Add(time.Hour)
		r.Forced = true
	}))
	revs = append(revs, successor(last(), func(r *driver.Record) { // ForceClosed
		r.State = circuit.StateClosed
		r.Failures, r.Reopens = 0, 0
		r.Generation++
		r.OpenUntil = r.UpdatedAt.Add(time.Hour)
	}))
	revs = append(revs, successor(last(), func(r *driver.Record) {
		r.Forced = false
		r.OpenUntil = time.Time{}
	}))
	var prev *driver.Record
	for _, next := range revs {
		if err := next.Check(); err != nil {
			t.Fatalf("suite bug: invalid record %+v: %v", next, err)
		}
		mustReplace(t, s, prev, next)
		wantStored(t, s, next)
		prev = next
	}
}

func testStaleSwapRefused(t *testing.T, cfg Config) {
	v1 := closedRecord(t)
	v2 := successor(v1, func(r *driver.Record) { r.Failures = 1 })
	otherIncarnation := successor(v1, func(r *driver.Record) { r.Incarnation = driver.NewID() })
	otherIncarnation.Version = v2.Version
	tests := []struct {
		name   string
		stored []*driver.Record // revisions stored in order, nil-prev first
		prev   *driver.Record
	}{
		{"OldVersion", []*driver.Record{v1, v2}, v1},
		{"OtherIncarnation", []*driver.Record{v1, v2}, otherIncarnation},
		{"NilWhenPresent", []*driver.Record{v1}, nil},
		{"NonNilWhenAbsent", nil, v1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := cfg.Open(t)
			var cur *driver.Record
			for _, r := range tt.stored {
				mustReplace(t, s, cur, r)
				cur = r
			}
			next := successor(v2, func(r *driver.Record) { r.Failures = 7 })
			err := s.Replace(t.Context(), circuitName, tt.prev, next)
			if !errors.Is(err, driver.ErrConflict) {
				t.Fatalf("stale Replace = %v, want an error matching driver.ErrConflict", err)
			}
			wantStored(t, s, cur)
		})
	}
}

// Concurrency of testConcurrentSwaps: workers × increments stays below
// driver.MaxFailures, which bounds the counter.
const (
	swapWorkers    = 8
	swapIncrements = 16
)

func testConcurrentSwaps(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	first := closedRecord(t)
	mustReplace(t, s, nil, first)

	ctx := t.Context()
	var conflicts atomic.Int64
	errc := make(chan error, swapWorkers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range swapWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range swapIncrements {
				for {
					cur, _, err := s.Load(ctx, circuitName)
					if err != nil {
						errc <- fmt.Errorf("load: %w", err)
						return
					}
					if cur == nil {
						errc <- errors.New("load: record vanished")
						return
					}
					next := successor(cur, func(r *driver.Record) { r.Failures++ })
					runtime.Gosched() // let other workers load the same revision
					err = s.Replace(ctx, circuitName, cur, next)
					if err == nil {
						break
					}
					if !errors.Is(err, driver.ErrConflict) {
						errc <- fmt.Errorf("replace: %w", err)
						return
					}
					conflicts.Add(1)
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	got := mustLoad(t, s)
	const total = swapWorkers * swapIncrements
	if got.Failures != total || got.Version != first.Version+total {
		t.Fatalf("after %d concurrent increments: Failures = %d, Version = %d; want %d and %d (updates were lost)",
			total, got.Failures, got.Version, total, first.Version+total)
	}
	t.Logf("%d increments, %d conflicts retried", total, conflicts.Load())
}

func testDelete(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	ctx := t.Context()
	if err := s.Delete(ctx, circuitName); err != nil {
		t.Fatalf("Delete of an absent record: %v", err)
	}
	rec := closedRecord(t)
	mustReplace(t, s, nil, rec)
	if err := s.Delete(ctx, circuitName); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantStored(t, s, nil)
	if err := s.Delete(ctx, circuitName); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	wantStored(t, s, nil)
	// The circuit can be created afresh.
	fresh := closedRecord(t)
	mustReplace(t, s, nil, fresh)
	wantStored(t, s, fresh)
}

func testReplaceAfterDelete(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	rec := closedRecord(t)
	mustReplace(t, s, nil, rec)
	if err := s.Delete(t.Context(), circuitName); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	err := s.Replace(t.Context(), circuitName, rec, successor(rec, nil))
	if !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("Replace with the deleted record as prev = %v, want an error matching driver.ErrConflict", err)
	}
	wantStored(t, s, nil)
}

var policy = circuit.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

var errDown = errors.New("dependency down")

func fail(context.Context) (circuit.Outcome, error)    { return circuit.Failure, errDown }
func succeed(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }

// openCircuit runs policy.FailureThreshold failures through b.
func openCircuit(t *testing.T, b *circuit.Breaker) {
	t.Helper()
	for i := range policy.FailureThreshold {
		if err := b.Run(t.Context(), circuitName, policy, fail); !errors.Is(err, errDown) {
			t.Fatalf("failure %d: Run = %v, want the operation's error", i+1, err)
		}
	}
}

func snapshot(t *testing.T, b *circuit.Breaker) circuit.Snapshot {
	t.Helper()
	snap, err := b.Snapshot(t.Context(), circuitName)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return snap
}

func testBreakerOpensAndRecovers(t *testing.T, cfg Config) {
	clk := testenv.NewClock(base)
	b := circuit.New(cfg.Open(t), circuit.WithClock(clk.Now))
	ctx := t.Context()

	openCircuit(t, b)
	snap := snapshot(t, b)
	if snap.State != circuit.StateOpen || snap.Failures != policy.FailureThreshold {
		t.Fatalf("after %d failures: %v with %d failures, want open with %d", policy.FailureThreshold, snap.State, snap.Failures, policy.FailureThreshold)
	}
	if want := clk.Now().Add(policy.Cooldown); !snap.OpenUntil.Equal(want) {
		t.Errorf("OpenUntil = %v, want %v", snap.OpenUntil, want)
	}
	gen := snap.Generation

	clk.Advance(policy.Cooldown / 3)
	ran := false
	err := b.Run(ctx, circuitName, policy, func(context.Context) (circuit.Outcome, error) {
		ran = true
		return circuit.Success, nil
	})
	var open *circuit.OpenError
	if !errors.As(err, &open) {
		t.Fatalf("Run while open = %v, want *circuit.OpenError", err)
	}
	if ran {
		t.Fatal("the operation ran while the circuit was open")
	}
	if !errors.Is(err, circuit.ErrOpen) {
		t.Error("OpenError does not match circuit.ErrOpen")
	}
	if open.Name != circuitName {
		t.Errorf("OpenError.Name = %q, want %q", open.Name, circuitName)
	}
	if ra, want := open.RetryAfter(), policy.Cooldown-policy.Cooldown/3; ra != want {
		t.Errorf("RetryAfter = %v, want %v", ra, want)
	}

	clk.Advance(policy.Cooldown)
	if err := b.Run(ctx, circuitName, policy, func(context.Context) (circuit.Outcome, error) {
		ran = true
		return circuit.Success, nil
	}); err != nil || !ran {
		t.Fatalf("probe after the cooldown: Run = %v, ran = %v; want nil, true", err, ran)
	}
	snap = snapshot(t, b)
	if snap.State != circuit.StateClosed || snap.Failures != 0 || snap.Generation != gen+1 {
		t.Fatalf("after a successful probe: %v, %d failures, generation %d; want closed, 0, %d", snap.State, snap.Failures, snap.Generation, gen+1)
	}
	if err := b.Run(ctx, circuitName, policy, succeed); err != nil {
		t.Fatalf("Run after recovery: %v", err)
	}
}

// yieldingStore is the store under test with a scheduling point after each
// Load, so that concurrent callers decide on the same revision and race to
// replace it even when the store is fast.
type yieldingStore struct{ driver.Store }

func (s yieldingStore) Load(ctx context.Context, name string) (*driver.Record, time.Time, error) {
	rec, now, err := s.Store.Load(ctx, name)
	runtime.Gosched()
	return rec, now, err
}

// probeCallers is how many goroutines race for the half-open probe.
const probeCallers = 16

func testBreakerOneProbe(t *testing.T, cfg Config) {
	clk := testenv.NewClock(base)
	b := circuit.New(yieldingStore{cfg.Open(t)}, circuit.WithClock(clk.Now))
	openCircuit(t, b)
	gen := snapshot(t, b).Generation
	clk.Advance(policy.Cooldown)

	// Each caller reports "ran" when its operation starts and its result
	// when Run returns. A running probe holds until every caller has done
	// one or the other, so that no caller can arrive after the probe has
	// closed the circuit (and be admitted, rightly).
	type event struct {
		ran bool
		err error
	}
	events := make(chan event, 2*probeCallers)
	release := make(chan struct{})
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range probeCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := b.Run(t.Context(), circuitName, policy, func(context.Context) (circuit.Outcome, error) {
				events <- event{ran: true}
				<-release
				return circuit.Success, nil
			})
			events <- event{err: err}
		}()
	}
	close(start)
	ran, rejected := 0, 0
	var others []error
	for ran+rejected+len(others) < probeCallers {
		select {
		case e := <-events:
			switch {
			case e.ran:
				ran++
			case errors.As(e.err, new(*circuit.OpenError)):
				rejected++
			default:
				others = append(others, e.err) // a probe's result cannot come before release
			}
		case <-time.After(30 * time.Second):
			close(release)
			t.Fatalf("timed out: %d ran, %d rejected, other results %v", ran, rejected, others)
		}
	}
	close(release)
	wg.Wait()
	close(events)
	for e := range events {
		if !e.ran && e.err != nil {
			t.Errorf("probe: Run = %v, want nil", e.err)
		}
	}
	if ran != 1 || rejected != probeCallers-1 || len(others) != 0 {
		t.Fatalf("%d callers after the cooldown: %d ran, %d got OpenError, other results %v; want exactly 1 probe and %d rejections",
			probeCallers, ran, rejected, others, probeCallers-1)
	}
	snap := snapshot(t, b)
	if snap.State != circuit.StateClosed || snap.Generation != gen+1 {
		t.Fatalf("after the probe: %v, generation %d; want closed, %d", snap.State, snap.Generation, gen+1)
	}
}

func testCorruptLoad(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	mustReplace(t, s, nil, closedRecord(t))
	cfg.Corrupt(t, s, circuitName)
	rec, _, err := s.Load(t.Context(), circuitName)
	if !errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("Load of a corrupt record = %+v, %v; want an error matching driver.ErrCorrupt", rec, err)
	}
	if err := s.Delete(t.Context(), circuitName); err != nil {
		t.Fatalf("Delete of a corrupt record: %v", err)
	}
	wantStored(t, s, nil)
}

func testCorruptBreaker(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	b := circuit.New(s)
	ctx := t.Context()
	if err := b.Run(ctx, circuitName, policy, fail); !errors.Is(err, errDown) {
		t.Fatalf("first failure: Run = %v, want the operation's error", err)
	}
	cfg.Corrupt(t, s, circuitName)

	ran := false
	op := func(context.Context) (circuit.Outcome, error) {
		ran = true
		return circuit.Success, nil
	}
	err := b.Run(ctx, circuitName, policy, op)
	var se *circuit.StateError
	if !errors.As(err, &se) || !se.Corrupt() {
		t.Fatalf("Run over a corrupt record = %v, want a *circuit.StateError with Corrupt()", err)
	}
	if ran || se.Ran {
		t.Fatal("the operation ran over a corrupt record")
	}
	if _, err := b.Snapshot(ctx, circuitName); !errors.As(err, &se) || !se.Corrupt() {
		t.Fatalf("Snapshot of a corrupt record = %v, want a *circuit.StateError with Corrupt()", err)
	}
	if _, err := b.Allow(ctx, circuitName, policy); !errors.As(err, &se) || !se.Corrupt() {
		t.Fatalf("Allow over a corrupt record = %v, want a *circuit.StateError with Corrupt()", err)
	}

	if err := b.Clear(ctx, circuitName); err != nil {
		t.Fatalf("Clear of a corrupt record: %v", err)
	}
	if err := b.Run(ctx, circuitName, policy, op); err != nil || !ran {
		t.Fatalf("Run after Clear = %v, ran = %v; want nil, true", err, ran)
	}
	snap := snapshot(t, b)
	if !snap.Exists || snap.State != circuit.StateClosed || snap.Failures != 0 {
		t.Fatalf("after Clear and a success: %+v, want an existing closed record with no failures", snap)
	}
}
