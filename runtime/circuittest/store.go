package circuittest

import (
	"context"
	"sync"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Store is an in-memory circuit store: every Breaker given it, in this
// process, shares its circuits, with every guarantee the conformance suite
// (drivertest) checks: compare-and-swap replaces, records kept until
// cleared, and the failure-rate windows (of time and of calls) shared by
// all of them. Its Load
// leaves the time to the Breaker (the Kit's Clock, or the wall clock). The
// zero Store is ready to use; it is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	recs    map[string]*driver.Record
	windows map[windowKey]*driver.WindowCells
	calls   map[callsKey]*driver.CallCells
}

type windowKey struct {
	name string
	span time.Duration
}

type callsKey struct {
	name string
	n    int
}

// NewStore returns an empty Store.
func NewStore() *Store { return &Store{} }

// Load returns the circuit's record, nil when there is none, and the zero
// time.
func (s *Store) Load(ctx context.Context, name string) (*driver.Record, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recs[name], time.Time{}, nil
}

// Replace stores next if the stored record is still prev.
func (s *Store) Replace(ctx context.Context, name string, prev, next *driver.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !driver.SameRevision(s.recs[name], prev) {
		return driver.ErrConflict
	}
	if s.recs == nil {
		s.recs = map[string]*driver.Record{}
	}
	s.recs[name] = next
	return nil
}

// Delete removes the circuit's record.
func (s *Store) Delete(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.recs, name)
	return nil
}

// WindowCells returns the cells of the circuit's failure-rate window of
// span w, shared by every Breaker over s.
func (s *Store) WindowCells(name string, w time.Duration) (*driver.WindowCells, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cells(&s.windows, windowKey{name, w}), nil
}

// CallCells returns the cells of the circuit's failure-rate window of the
// last n calls, shared by every Breaker over s.
func (s *Store) CallCells(name string, n int) (*driver.CallCells, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cells(&s.calls, callsKey{name, n}), nil
}

// cells returns m's cells under k, making them (and m) when there are none.
func cells[K comparable, C any](m *map[K]*C, k K) *C {
	c := (*m)[k]
	if c == nil {
		if *m == nil {
			*m = map[K]*C{}
		}
		c = new(C)
		(*m)[k] = c
	}
	return c
}

// Names returns the names of the circuits with a record, in no order.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.recs))
	for n := range s.recs {
		names = append(names, n)
	}
	return names, nil
}
