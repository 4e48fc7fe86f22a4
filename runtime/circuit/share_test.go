package circuit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// sharedStore is a memStore that keeps shared window counts as a server
// would (driver.WindowSharer), one flush at a time, and can hold a flush
// on its way (hold) to let others overtake it.
type sharedStore struct {
	*memStore
	mu       sync.Mutex
	counts   map[int64]driver.Counts // by bucket, one epoch: the tests' circuits keep theirs
	flushes  int
	inFlight int
	maxIn    int           // the most flushes in flight at once
	fail     error         // when set, the next flush fails with it, counting nothing
	hold     chan struct{} // when set, the next flush waits on it (after taking its reply)
	held     chan struct{} // closed when that flush is waiting
}

func (s *sharedStore) ShareWindow(ctx context.Context, name string, w time.Duration, e uint64, b int64, add []driver.BucketCounts) (driver.Counts, error) {
	s.mu.Lock()
	if err := s.fail; err != nil {
		s.fail = nil
		s.mu.Unlock()
		return driver.Counts{}, err
	}
	s.flushes++
	s.inFlight++
	s.maxIn = max(s.maxIn, s.inFlight)
	if s.counts == nil {
		s.counts = map[int64]driver.Counts{}
	}
	for _, c := range add {
		n := s.counts[c.Bucket]
		n.Calls += c.Calls
		n.Failures += c.Failures
		s.counts[c.Bucket] = n
	}
	var sum driver.Counts
	for bk, n := range s.counts {
		if bk > b-driver.WindowBuckets && bk <= b {
			sum.Calls += n.Calls
			sum.Failures += n.Failures
		}
	}
	hold, held := s.hold, s.held
	s.hold = nil
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if hold != nil {
		close(held)
		select {
		case <-hold:
		case <-ctx.Done():
			return driver.Counts{}, ctx.Err()
		}
	}
	return sum, nil
}

// sharedPolicy is the tests' rate rule: it never opens on their calls.
var sharedPolicy = circuit.Policy{FailureRate: 0.5, MinCalls: 1000, Window: time.Minute, Cooldown: time.Minute, ProbeLease: time.Second}

// newShared returns a Breaker over a sharedStore, on a test clock.
func newShared(t *testing.T) (*circuit.Breaker, *sharedStore, *testenv.Clock) {
	clock := newClock()
	s := &sharedStore{memStore: newMemStore(t, clock)}
	return circuit.New(s, circuit.WithClock(clock.Now)), s, clock
}

// TestOneFlushInFlight checks that a process has one window flush in
// flight at a time: a flush that overtook a slower one would have its
// newer server counts overwritten by the slower one's older reply.
func TestOneFlushInFlight(t *testing.T) {
	b, s, clock := newShared(t)
	ctx := t.Context()
	if err := b.Run(ctx, "billing-api", sharedPolicy, succeed); err != nil { // creates the record; flushes
		t.Fatal(err)
	}
	clock.Advance(driver.FlushEvery)
	release := make(chan struct{})
	held := make(chan struct{})
	s.mu.Lock()
	s.hold, s.held = release, held
	s.mu.Unlock()
	slow := make(chan error, 1)
	go func() { slow <- b.Run(ctx, "billing-api", sharedPolicy, succeed) }()
	<-held
	for range 2 * driver.FlushBatch { // enough to flush twice over
		if err := b.Run(ctx, "billing-api", sharedPolicy, succeed); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxIn != 1 {
		t.Errorf("%d flushes were in flight at once, want 1", s.maxIn)
	}
}

// TestFailedFlushKeepsCounts checks that the counts of a flush that failed
// are sent by the next one.
func TestFailedFlushKeepsCounts(t *testing.T) {
	b, s, clock := newShared(t)
	ctx := t.Context()
	for range driver.FlushBatch { // the first flushes at once; 99 wait
		if err := b.Run(ctx, "billing-api", sharedPolicy, succeed); err != nil {
			t.Fatal(err)
		}
	}
	down := errors.New("server down")
	s.mu.Lock()
	s.fail = down
	s.mu.Unlock()
	// The 100th waiting call flushes the batch; the server fails it.
	if err := b.Run(ctx, "billing-api", sharedPolicy, succeed); !errors.Is(err, down) {
		t.Fatalf("Run whose flush failed = %v, want %v", err, down)
	}
	// The next call repays the settlement owed, which flushes the batch,
	// then counts itself; the one after flushes it.
	for range 2 {
		clock.Advance(driver.FlushEvery)
		if err := b.Run(ctx, "billing-api", sharedPolicy, succeed); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var calls uint64
	for _, n := range s.counts {
		calls += n.Calls
	}
	if want := uint64(driver.FlushBatch + 3); calls != want {
		t.Errorf("server counts %d calls, want %d: a failed flush's counts are sent again", calls, want)
	}
}

// TestSharedWindowCallAllocs: a healthy call counted in a shared window
// (a WindowSharer's batch) allocates nothing between flushes: the batch is
// found, not built anew and thrown away, on every call.
func TestSharedWindowCallAllocs(t *testing.T) {
	b, _, _ := newShared(t)
	ctx := t.Context()
	c := b.Circuit("billing-api", sharedPolicy)
	op := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
	if err := c.Run(ctx, op); err != nil { // creates the record; flushes
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(driver.FlushBatch/2-2, func() {
		if err := c.Run(ctx, op); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations a healthy call counted in a shared window, want 0", allocs)
	}
}

// TestOwedWindowFailureCountsOnce: a Failure whose window flush failed is
// in the batch already (the flush's counts go back). It is owed; writing it
// does not count it again: one failure in three calls leaves a circuit
// whose MinCalls is 4 closed.
func TestOwedWindowFailureCountsOnce(t *testing.T) {
	b, s, clock := newShared(t)
	ctx := t.Context()
	p := circuit.Policy{FailureRate: 0.5, MinCalls: 4, Window: time.Minute, Cooldown: time.Minute, ProbeLease: time.Second}
	boom := errors.New("boom")
	for range 2 { // the first flushes at once, the second waits
		if err := b.Run(ctx, testName, p, succeed); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(driver.FlushEvery)
	s.mu.Lock()
	s.fail = errors.New("server down")
	s.mu.Unlock()
	// The failure's flush fails: the failure is owed (a StateError after the call).
	if err := b.Run(ctx, testName, p, failing(boom)); err == nil {
		t.Fatal("a failure whose flush failed: nil error")
	}
	clock.Advance(driver.FlushEvery)
	// The next call repays the failure (S S F: 3 calls, 1 failure), then runs.
	err := b.Run(ctx, testName, p, succeed)
	t.Logf("the call after: %v", err)
	s.mu.Lock()
	var sum driver.Counts
	for _, n := range s.counts {
		sum.Calls += n.Calls
		sum.Failures += n.Failures
	}
	s.mu.Unlock()
	if sum.Failures != 1 {
		t.Errorf("server counts %+v: the one failure counted %d times", sum, sum.Failures)
	}
	if r := s.rec(testName); r.State != circuit.StateClosed {
		t.Errorf("1 failure in 3 calls (MinCalls 4, rate 50%%) opened the circuit: %s", fmtRecord(r))
	}
}

// TestSuccessOwedWhenItsWindowFails: a Success that resets the consecutive
// count, whose window flush fails, is owed and written: two failures
// before it and one after leave a circuit whose FailureThreshold is 3
// closed.
func TestSuccessOwedWhenItsWindowFails(t *testing.T) {
	b, s, clock := newShared(t)
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 3, FailureRate: 0.9, MinCalls: 1000, Window: time.Minute, Cooldown: time.Minute, ProbeLease: time.Second}
	boom := errors.New("boom")
	for range 2 {
		if err := b.Run(ctx, testName, p, failing(boom)); err != boom {
			t.Fatal(err)
		}
	}
	clock.Advance(driver.FlushEvery)
	s.mu.Lock()
	s.fail = errors.New("server down")
	s.mu.Unlock()
	err := b.Run(ctx, testName, p, succeed) // resets the run of failures, but its flush fails
	t.Logf("the success: %v; record %s", err, fmtRecord(s.rec(testName)))
	if err := b.Run(ctx, testName, p, failing(boom)); err != boom {
		t.Fatalf("next failure: %v", err)
	}
	if r := s.rec(testName); r.State != circuit.StateClosed {
		t.Errorf("F F S F opened a circuit with FailureThreshold 3: %s", fmtRecord(r))
	}
}
