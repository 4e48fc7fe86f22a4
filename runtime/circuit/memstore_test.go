package circuit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// t0 is the fixed start of every test clock.
var t0 = time.Date(2030, time.January, 2, 3, 4, 5, 0, time.UTC)

// testName is the circuit of most tests.
const testName = "billing-api"

// pol is the policy of most tests: 3 failures, 30s cooldown, 10s lease.
var pol = circuit.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

// newClock returns a test clock at t0.
func newClock() *testenv.Clock { return testenv.NewClock(t0) }

// memStore is an in-memory circuit.Store for testing the Breaker's own logic:
// a map under a mutex, compare-and-swap by driver.SameRevision. It counts
// every call, can fail or conflict on demand, honours ctx like a real store's
// round trip would, and checks that every record the Breaker writes is
// consistent.
type memStore struct {
	t     testing.TB
	clock *testenv.Clock

	mu       sync.Mutex
	recs     map[string]*driver.Record
	loads    int
	replaces int // Replace calls, successful or not
	commits  int // successful Replaces
	deletes  int

	corrupt      map[string]bool // Load reports these records corrupt until deleted
	loadErr      error           // returned by Load while set
	replaceErr   error           // returned by Replace while set
	landErr      error           // returned by a Replace that stored the record, while set
	conflicts    int             // the next n Replaces return a wrapped ErrConflict
	beforeCommit func()          // run once, outside the lock, at the start of the next Replace
	noClock      bool            // Load returns the zero Time: the Breaker keeps the clock
	frozen       bool            // Load waits for its context to end, as on a frozen server
}

func newMemStore(t testing.TB, clock *testenv.Clock) *memStore {
	return &memStore{t: t, clock: clock, recs: map[string]*driver.Record{}, corrupt: map[string]bool{}}
}

func (s *memStore) Load(ctx context.Context, name string) (*driver.Record, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, err
	}
	s.mu.Lock()
	if s.frozen {
		s.mu.Unlock()
		<-ctx.Done()
		return nil, time.Time{}, ctx.Err()
	}
	defer s.mu.Unlock()
	s.loads++
	if s.loadErr != nil {
		return nil, time.Time{}, s.loadErr
	}
	if s.corrupt[name] {
		return nil, time.Time{}, fmt.Errorf("memstore: record %s: unknown field %q: %w", circuit.Key(name), "x", driver.ErrCorrupt)
	}
	// The stored record is shared, as the contract says: the race detector
	// catches a Breaker that modifies it.
	if s.noClock {
		return s.recs[name], time.Time{}, nil
	}
	return s.recs[name], s.clock.Now(), nil
}

func (s *memStore) Replace(ctx context.Context, name string, prev, next *driver.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	hook := s.beforeCommit
	s.beforeCommit = nil
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaces++
	if s.replaceErr != nil {
		return s.replaceErr
	}
	if s.conflicts > 0 {
		s.conflicts--
		return fmt.Errorf("memstore: %w", driver.ErrConflict)
	}
	if s.corrupt[name] || !driver.SameRevision(s.recs[name], prev) {
		return driver.ErrConflict
	}
	if err := next.Check(); err != nil {
		s.t.Errorf("Breaker wrote an inconsistent record %+v: %v", *next, err)
	}
	if next.Name != name {
		s.t.Errorf("Breaker wrote record named %q under %q", next.Name, name)
	}
	if prev != nil && next.Version != prev.Version+1 || prev == nil && next.Version != 1 {
		s.t.Errorf("Breaker wrote version %d over %s", next.Version, fmtRecord(prev))
	}
	cp := *next
	s.recs[name] = &cp
	s.commits++
	return s.landErr
}

func (s *memStore) Delete(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deletes++
	delete(s.recs, name)
	delete(s.corrupt, name)
	return nil
}

// rec returns a copy of the stored record, or nil.
func (s *memStore) rec(name string) *driver.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[name]
	if r == nil {
		return machine.Fresh(name) // what no record stands for
	}
	cp := *r
	return &cp
}

// counts returns Load, Replace and Delete call counts.
func (s *memStore) counts() (loads, replaces, deletes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads, s.replaces, s.deletes
}

func (s *memStore) set(f func(s *memStore)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// probe reports whether the circuit's record is half-open with a probe in
// flight, and its token.
func (s *memStore) probe(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[name]
	if r == nil || r.State != circuit.StateHalfOpen || r.ProbeToken == "" {
		return "", false
	}
	return r.ProbeToken, true
}
func fmtRecord(r *driver.Record) string {
	if r == nil {
		return "<nil>"
	}
	return fmt.Sprintf("{%s %s failures=%d gen=%d inc=%s v=%d open_until=%s token=%q lease_until=%s updated=%s successes=%d reopens=%d forced=%t}",
		r.Name, r.State, r.Failures, r.Generation, r.Incarnation, r.Version,
		fmtTime(r.OpenUntil), r.ProbeToken, fmtTime(r.LeaseUntil), fmtTime(r.UpdatedAt), r.Successes, r.Reopens, r.Forced)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return "t0+" + t.Sub(t0).String()
}

// ratePol opens on a failure rate of 50% over at least 4 calls in a minute,
// and on 3 consecutive failures.
var ratePol = circuit.Policy{FailureThreshold: 3, FailureRate: 0.5, MinCalls: 4, Window: time.Minute,
	Cooldown: 30 * time.Second, MaxCooldown: 100 * time.Second, ProbeLease: 10 * time.Second, CloseAfter: 3}

// rateOnlyPol is ratePol without the consecutive rule.
var rateOnlyPol = func() circuit.Policy { p := ratePol; p.FailureThreshold = 0; return p }()

// watchedStore is a memStore that vouches for the records it loads
// (driver.Watcher), as the file store does: one change word per circuit,
// odd while a Replace runs, and an epoch word that never moves. With now
// set it is a driver.Clock too (clockedStore).
type watchedStore struct {
	*memStore
	words sync.Map // name → *atomic.Uint64
	epoch atomic.Uint64
	now   func() time.Time
}

func newWatchedStore(t testing.TB) *watchedStore {
	s := &watchedStore{memStore: newMemStore(t, newClock())}
	s.memStore.noClock = true
	s.epoch.Store(1)
	return s
}

func (s *watchedStore) word(name string) *atomic.Uint64 {
	w, _ := s.words.LoadOrStore(name, new(atomic.Uint64))
	return w.(*atomic.Uint64)
}

func (s *watchedStore) LoadWatched(ctx context.Context, name string) (*driver.Record, driver.Watch, error) {
	w := s.word(name)
	before := w.Load()
	rec, _, err := s.memStore.Load(ctx, name)
	if err != nil || before%2 == 1 || w.Load() != before {
		return rec, driver.Watch{}, err
	}
	return rec, driver.NewWatch(w, before, &s.epoch, s.epoch.Load()), nil
}

func (s *watchedStore) Refresh(context.Context) error { return nil }

func (s *watchedStore) Replace(ctx context.Context, name string, prev, next *driver.Record) error {
	w := s.word(name)
	w.Add(1)
	defer w.Add(1)
	return s.memStore.Replace(ctx, name, prev, next)
}

// clockedStore is a watchedStore whose processes share the clock now.
type clockedStore struct{ *watchedStore }

func (s clockedStore) Now() time.Time { return s.now() }
