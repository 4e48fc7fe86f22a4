package circuit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// TestNoRecordUntilSomethingChanges: a circuit has no record until an
// outcome changes something, and what it had counted before stays counted.
func TestNoRecordUntilSomethingChanges(t *testing.T) {
	boom := errors.New("boom")
	t.Run("healthy calls write nothing", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		for range 100 {
			if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
				t.Fatal(err)
			}
		}
		if _, replaces, _ := s.counts(); replaces != 0 {
			t.Fatalf("100 healthy calls made %d Replace calls, want 0", replaces)
		}
		if snap, err := b.Snapshot(t.Context(), testName); err != nil || snap.Exists || snap.State != circuit.StateClosed {
			t.Fatalf("Snapshot = %+v, %v; want closed, no record", snap, err)
		}
	})
	t.Run("the first failure creates the record in one write", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		_ = b.Run(t.Context(), testName, pol, succeed)
		if err := b.Run(t.Context(), testName, pol, failing(boom)); err != boom {
			t.Fatal(err)
		}
		r := s.rec(testName)
		if _, replaces, _ := s.counts(); replaces != 1 || r.Version != 1 || r.Failures != 1 || r.Incarnation != driver.FirstIncarnation {
			t.Fatalf("after the first failure: %d Replace calls, %s; want 1, version 1 with 1 failure", replaces, fmtRecord(r))
		}
	})
	t.Run("calls admitted on no record count against the record another call creates", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		var tickets []*circuit.Ticket
		for range pol.FailureThreshold {
			tk, err := b.Allow(t.Context(), testName, pol)
			if err != nil {
				t.Fatal(err)
			}
			tickets = append(tickets, tk)
		}
		for _, tk := range tickets {
			if err := tk.Done(circuit.Failure); err != nil {
				t.Fatal(err)
			}
		}
		if r := s.rec(testName); r.State != circuit.StateOpen || r.Failures != pol.FailureThreshold {
			t.Fatalf("after %d failures admitted on no record: %s, want open", pol.FailureThreshold, fmtRecord(r))
		}
	})
	t.Run("the rate rule's window keeps what it counted before the record", func(t *testing.T) {
		// 50% of at least 6 calls over a minute, and a consecutive rule
		// of 10 that counts each failure in the record: the first failure
		// creates it, and the window still holds the successes before.
		p := circuit.Policy{FailureThreshold: 10, FailureRate: 0.5, MinCalls: 6, Window: time.Minute, Cooldown: time.Minute, ProbeLease: time.Second}
		b, s, _ := newBreaker(t)
		outcomes := []circuit.Outcome{circuit.Success, circuit.Success, circuit.Success, circuit.Failure, circuit.Failure, circuit.Failure}
		for i, o := range outcomes {
			_ = b.Run(t.Context(), testName, p, func(context.Context) (circuit.Outcome, error) { return o, nil })
			_, replaces, _ := s.counts()
			if want := max(0, i-2); replaces != want {
				t.Fatalf("call %d (%v): %d Replace calls, want %d", i, o, replaces, want)
			}
		}
		if r := s.rec(testName); r.State != circuit.StateOpen || r.Failures != 3 {
			t.Fatalf("3 failures of 6 calls, the first 3 made on no record: %s, want open", fmtRecord(r))
		}
	})
	t.Run("Clear leaves a record calls admitted on no record cannot change", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		stale, err := b.Allow(t.Context(), testName, pol)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Clear(t.Context(), testName); err != nil {
			t.Fatal(err)
		}
		if err := stale.Done(circuit.Failure); err != nil {
			t.Fatal(err)
		}
		if r := s.rec(testName); r.Failures != 0 || r.Incarnation == driver.FirstIncarnation {
			t.Fatalf("after Clear and a failure admitted before it: %s, want no failure counted", fmtRecord(r))
		}
	})
}
