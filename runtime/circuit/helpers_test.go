package circuit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
)

type op = func(context.Context) (circuit.Outcome, error)

func succeed(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }

func failing(err error) op {
	return func(context.Context) (circuit.Outcome, error) { return circuit.Failure, err }
}

func ignoring(err error) op {
	return func(context.Context) (circuit.Outcome, error) { return circuit.Ignored, err }
}

func mustNotRun(t *testing.T) op {
	return func(context.Context) (circuit.Outcome, error) {
		t.Error("the operation was invoked")
		return circuit.Success, nil
	}
}

// counted returns an op that counts its invocations and then behaves as o.
func counted(n *int, o op) op {
	return func(ctx context.Context) (circuit.Outcome, error) {
		*n++
		return o(ctx)
	}
}

func newBreaker(t *testing.T, opts ...circuit.Option) (*circuit.Breaker, *memStore, *testenv.Clock) {
	t.Helper()
	clock := newClock()
	s := newMemStore(t, clock)
	return circuit.New(s, append([]circuit.Option{circuit.WithClock(clock.Now)}, opts...)...), s, clock
}

// openCircuit runs pol.FailureThreshold failing calls, leaving the circuit
// open until clock.Now()+pol.Cooldown.
func openCircuit(t *testing.T, b *circuit.Breaker, s *memStore, p circuit.Policy) {
	t.Helper()
	boom := errors.New("boom")
	for range p.FailureThreshold {
		if err := b.Run(t.Context(), testName, p, failing(boom)); !errors.Is(err, boom) {
			t.Fatalf("failing call = %v, want %v", err, boom)
		}
	}
	if r := s.rec(testName); r == nil || r.State != circuit.StateOpen {
		t.Fatalf("after %d failures: %s, want open", p.FailureThreshold, fmtRecord(r))
	}
}

func wantOpenError(t *testing.T, err error, state circuit.State) *circuit.OpenError {
	t.Helper()
	var oe *circuit.OpenError
	if !errors.As(err, &oe) {
		t.Fatalf("err = %v, want *circuit.OpenError", err)
	}
	if oe.State != state {
		t.Errorf("OpenError.State = %v, want %v", oe.State, state)
	}
	if oe.Name != testName {
		t.Errorf("OpenError.Name = %q, want %q", oe.Name, testName)
	}
	return oe
}

func wantStateError(t *testing.T, err error, op string, ran bool) *circuit.StateError {
	t.Helper()
	var se *circuit.StateError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *circuit.StateError", err)
	}
	if se.Op != op || se.Ran != ran || se.Name != testName {
		t.Errorf("StateError{Name %q Op %q Ran %v}, want {%q %q %v}", se.Name, se.Op, se.Ran, testName, op, ran)
	}
	return se
}
