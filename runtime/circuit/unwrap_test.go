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

// capStore is a memStore with the optional interfaces Clock, Binder and
// WindowStore, each counting its use.
type capStore struct {
	*memStore
	clock *testenv.Clock

	mu    sync.Mutex
	binds map[string]int
	cells map[time.Duration]*driver.WindowCells
}

func newCapStore(t *testing.T) *capStore {
	s := newMemStore(t, newClock())
	s.set(func(s *memStore) { s.noClock = true }) // the Breaker reads the Clock
	return &capStore{memStore: s, clock: s.clock, binds: map[string]int{}, cells: map[time.Duration]*driver.WindowCells{}}
}

func (s *capStore) Now() time.Time { return s.clock.Now() }

func (s *capStore) Bind(name string) driver.BoundStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.binds[name]++
	return bound{s, name}
}

func (s *capStore) WindowCells(name string, w time.Duration) (*driver.WindowCells, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cells[w] == nil {
		s.cells[w] = new(driver.WindowCells)
	}
	return s.cells[w], nil
}

// bound is a circuit of a capStore.
type bound struct {
	s    *capStore
	name string
}

func (b bound) Load(ctx context.Context) (*driver.Record, time.Time, error) {
	return b.s.Load(ctx, b.name)
}

func (b bound) Replace(ctx context.Context, prev, next *driver.Record) error {
	return b.s.Replace(ctx, b.name, prev, next)
}

func (b bound) Delete(ctx context.Context) error { return b.s.Delete(ctx, b.name) }

// wrapper wraps a store, hiding its optional interfaces but for Unwrap.
type wrapper struct{ circuit.Store }

func (w wrapper) Unwrap() circuit.Store { return w.Store }

// clockWrapper is a wrapper with a clock of its own.
type clockWrapper struct {
	wrapper
	clock *testenv.Clock
}

func (w clockWrapper) Now() time.Time { return w.clock.Now() }

func TestStoreAs(t *testing.T) {
	inner := newCapStore(t)
	own := testenv.NewClock(t0.Add(time.Hour))
	tests := []struct {
		name  string
		store circuit.Store
		want  time.Time // the Clock found, by its time; zero: none
	}{
		{"the store", inner, t0},
		{"wrapped", wrapper{inner}, t0},
		{"wrapped twice", wrapper{wrapper{inner}}, t0},
		{"a wrapper's own clock first", clockWrapper{wrapper{inner}, own}, own.Now()},
		{"without Unwrap", struct{ circuit.Store }{inner}, time.Time{}},
		{"a nil wrapped store", wrapper{}, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := circuit.StoreAs[driver.Clock](tt.store)
			if ok != !tt.want.IsZero() {
				t.Fatalf("StoreAs[Clock] found one: %t, want %t", ok, !tt.want.IsZero())
			}
			if ok && !c.Now().Equal(tt.want) {
				t.Errorf("StoreAs[Clock] found the clock at %v, want %v", c.Now(), tt.want)
			}
		})
	}
	if _, ok := circuit.StoreAs[driver.WindowSharer](wrapper{inner}); ok {
		t.Error("StoreAs[WindowSharer] found one in a store that is none")
	}
}

// TestBreakerUnwrapsStore builds Breakers over a wrapper of a store that
// is a Clock, a Binder and a WindowStore: they decide by the store's clock,
// bind each circuit through it once, and count the rate rule in its shared
// window.
func TestBreakerUnwrapsStore(t *testing.T) {
	s := newCapStore(t)
	s.clock.Set(t0.Add(-10 * 365 * 24 * time.Hour)) // far from the wall clock
	ctx := t.Context()

	b := circuit.New(wrapper{wrapper{s}})
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Hour, ProbeLease: time.Second}
	for range 2 {
		if err := b.Run(ctx, testName, p, succeed); err != nil {
			t.Fatal(err)
		}
	}
	_ = b.Run(ctx, testName, p, failing(errors.New("boom")))
	if r := s.rec(testName); r.State != circuit.StateOpen || !r.OpenUntil.Equal(s.clock.Now().Add(time.Hour)) {
		t.Errorf("record %s, want open until the store's clock + 1h", fmtRecord(r))
	}
	if n := s.binds[testName]; n != 1 {
		t.Errorf("the circuit was bound %d times through the store, want once", n)
	}

	// 50% of at least 8 calls: two Breakers make 4 each, 2 of them failed.
	const rated = "rated"
	rate := circuit.Policy{FailureRate: 0.5, MinCalls: 8, Window: time.Minute, Cooldown: time.Hour, ProbeLease: time.Second}
	for _, b := range []*circuit.Breaker{circuit.New(wrapper{s}), circuit.New(wrapper{s})} {
		for _, o := range []circuit.Outcome{circuit.Success, circuit.Failure, circuit.Success, circuit.Failure} {
			if err := b.Run(ctx, rated, rate, func(context.Context) (circuit.Outcome, error) { return o, nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	if r := s.rec(rated); r.State != circuit.StateOpen {
		t.Errorf("after 4 failures in 8 calls counted in the store's window: %s, want open", fmtRecord(r))
	}
}
