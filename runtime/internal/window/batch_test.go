package window

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// sums is a driver.WindowSharer that keeps one sum per epoch.
type sums struct {
	mu sync.Mutex
	by map[uint64]driver.Counts
}

func (s *sums) ShareWindow(_ context.Context, _ string, _ time.Duration, e uint64, _ int64, add []driver.BucketCounts) (driver.Counts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[uint64]driver.Counts{}
	}
	n := s.by[e]
	for _, c := range add {
		n.Calls += c.Calls
		n.Failures += c.Failures
	}
	s.by[e] = n
	return n, nil
}

// TestLateGenerationKeepsTheBatch: a settlement that loaded the record of
// an earlier generation, before a probe closed the circuit, counts late.
// It is not counted, and the new generation's unflushed counts stay.
func TestLateGenerationKeepsTheBatch(t *testing.T) {
	var c Circuit
	s := &sums{}
	p := &machine.Policy{FailureRate: 0.5, MinCalls: 4, Window: time.Minute}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	gen1 := &driver.Record{Incarnation: driver.FirstIncarnation, Generation: 1}
	gen2 := &driver.Record{Incarnation: driver.FirstIncarnation, Generation: 2}
	for range 3 { // the first flushes at once; two wait
		if _, _, err := c.share(t.Context(), s, "billing-api", p, gen2, now, machine.Failure, true); err != nil {
			t.Fatal(err)
		}
	}
	if _, counted, err := c.share(t.Context(), s, "billing-api", p, gen1, now, machine.Failure, true); err != nil || counted {
		t.Fatalf("a late call of generation 1: counted %v, %v; want not counted", counted, err)
	}
	n, _, err := c.share(t.Context(), s, "billing-api", p, gen2, now, machine.Failure, true)
	if want := (driver.Counts{Calls: 4, Failures: 4}); err != nil || n != want {
		t.Fatalf("the fourth call of generation 2 decides with %+v, %v; want %+v", n, err, want)
	}
}
