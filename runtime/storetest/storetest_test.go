package storetest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/storetest"
)

// memStore is the smallest correct circuit.Store: records in a map under a
// mutex. It checks the suite itself: a correct store must pass it.
type memStore struct {
	mu      sync.Mutex
	recs    map[string]*circuit.Record
	corrupt map[string]bool
}

func newMemStore() *memStore {
	return &memStore{recs: map[string]*circuit.Record{}, corrupt: map[string]bool{}}
}

func (s *memStore) Load(_ context.Context, name string) (*circuit.Record, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.corrupt[name] {
		return nil, time.Time{}, fmt.Errorf("record %s: %w", name, circuit.ErrCorrupt)
	}
	return s.recs[name], time.Time{}, nil
}

func (s *memStore) Replace(_ context.Context, name string, prev, next *circuit.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.corrupt[name] {
		return fmt.Errorf("record %s: %w", name, circuit.ErrCorrupt)
	}
	if !circuit.SameRevision(s.recs[name], prev) {
		return circuit.ErrConflict
	}
	s.recs[name] = next
	return nil
}

func (s *memStore) Delete(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.recs, name)
	delete(s.corrupt, name)
	return nil
}

func TestMemStore(t *testing.T) {
	storetest.Run(t, storetest.Config{
		Open: func(*testing.T) circuit.Store { return newMemStore() },
		Corrupt: func(t *testing.T, s circuit.Store, name string) {
			m := s.(*memStore)
			m.mu.Lock()
			defer m.mu.Unlock()
			m.corrupt[name] = true
		},
	})
}
