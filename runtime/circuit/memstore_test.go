package circuit_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// t0 is the fixed start of every test clock.
var t0 = time.Date(2030, time.January, 2, 3, 4, 5, 0, time.UTC)

// newClock returns a test clock at t0.
func newClock() *testenv.Clock { return testenv.NewClock(t0) }

// memStore is an in-memory circuit.Store for testing the Breaker's own logic:
// a map under a mutex, compare-and-swap by circuit.SameRevision. It counts
// every call, can fail or conflict on demand, honours ctx like a real store's
// round trip would, and checks that every record the Breaker writes is
// consistent.
type memStore struct {
	t     testing.TB
	clock *testenv.Clock

	mu       sync.Mutex
	recs     map[string]*circuit.Record
	loads    int
	replaces int // Replace calls, successful or not
	commits  int // successful Replaces
	deletes  int

	corrupt      map[string]bool // Load reports these records corrupt until deleted
	loadErr      error           // returned by Load while set
	replaceErr   error           // returned by Replace while set
	conflicts    int             // the next n Replaces return a wrapped ErrConflict
	beforeCommit func()          // run once, outside the lock, at the start of the next Replace
	noClock      bool            // Load returns the zero Time: the Breaker keeps the clock
}

func newMemStore(t testing.TB, clock *testenv.Clock) *memStore {
	return &memStore{t: t, clock: clock, recs: map[string]*circuit.Record{}, corrupt: map[string]bool{}}
}

func (s *memStore) Load(ctx context.Context, name string) (*circuit.Record, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	if s.loadErr != nil {
		return nil, time.Time{}, s.loadErr
	}
	if s.corrupt[name] {
		return nil, time.Time{}, fmt.Errorf("memstore: record %s: unknown field %q: %w", circuit.Key(name), "x", circuit.ErrCorrupt)
	}
	// The stored record is shared, as the contract says: the race detector
	// catches a Breaker that modifies it.
	if s.noClock {
		return s.recs[name], time.Time{}, nil
	}
	return s.recs[name], s.clock.Now(), nil
}

func (s *memStore) Replace(ctx context.Context, name string, prev, next *circuit.Record) error {
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
		return fmt.Errorf("memstore: %w", circuit.ErrConflict)
	}
	if s.corrupt[name] || !circuit.SameRevision(s.recs[name], prev) {
		return circuit.ErrConflict
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
	return nil
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
func (s *memStore) rec(name string) *circuit.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[name]
	if r == nil {
		return nil
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
