package drivertest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver/drivertest"
)

// memStore is the smallest correct driver.Store: records in a map under a
// mutex. It checks the suite itself: a correct store must pass it.
type memStore struct {
	mu      sync.Mutex
	recs    map[string]*driver.Record
	corrupt map[string]bool
}

func newMemStore() *memStore {
	return &memStore{recs: map[string]*driver.Record{}, corrupt: map[string]bool{}}
}

func (s *memStore) Load(_ context.Context, name string) (*driver.Record, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.corrupt[name] {
		return nil, time.Time{}, fmt.Errorf("record %s: %w", name, driver.ErrCorrupt)
	}
	return s.recs[name], time.Time{}, nil
}

func (s *memStore) Replace(_ context.Context, name string, prev, next *driver.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.corrupt[name] {
		return fmt.Errorf("record %s: %w", name, driver.ErrCorrupt)
	}
	if !driver.SameRevision(s.recs[name], prev) {
		return driver.ErrConflict
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
	drivertest.Run(t, drivertest.Config{
		Open: func(*testing.T) driver.Store { return newMemStore() },
		Corrupt: func(t *testing.T, s driver.Store, name string) {
			m := s.(*memStore)
			m.mu.Lock()
			defer m.mu.Unlock()
			m.corrupt[name] = true
		},
	})
}
