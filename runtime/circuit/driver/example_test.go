package driver_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// mapStore keeps records in a map: a Store in its smallest form. Its
// processes share nothing, so Load returns the zero time and the Breaker
// reads the local clock.
type mapStore struct {
	mu   sync.Mutex
	recs map[string]*driver.Record
}

func (s *mapStore) Load(_ context.Context, name string) (*driver.Record, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recs[name], time.Time{}, nil
}

func (s *mapStore) Replace(_ context.Context, name string, prev, next *driver.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !driver.SameRevision(s.recs[name], prev) {
		return driver.ErrConflict
	}
	s.recs[name] = next
	return nil
}

func (s *mapStore) Delete(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.recs, name)
	return nil
}

// A store implements Load, a compare-and-swap Replace and Delete; the
// Breaker makes every decision.
func Example() {
	s := &mapStore{recs: map[string]*driver.Record{}}
	b := circuit.New(s)
	p := circuit.Policy{FailureThreshold: 1}
	down := errors.New("down")
	_ = b.Run(context.Background(), "billing-api", p, func(context.Context) (circuit.Outcome, error) {
		return circuit.Failure, down
	})
	rec := s.recs["billing-api"]
	fmt.Println(rec.State, rec.Failures, rec.Version)
	// Output: open 1 1
}
