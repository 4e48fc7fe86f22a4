package drivertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// outageBound is how long a call may take to fail when the store's backend
// is down.
const outageBound = 5 * time.Second

// Outage checks that b, a Breaker over a store whose backend stop makes
// unreachable (kills or freezes a server), fails closed: a call during
// which stop runs returns a *circuit.StateError after the call (Ran, the
// call's error wrapped), and every later call, whatever its outcome would
// be, returns a StateError within 5 s without running. Each call runs under
// a context from ctx. The circuit name must have a record, closed.
func Outage(t *testing.T, b *circuit.Breaker, name string, ctx func() context.Context, stop func()) {
	t.Helper()
	ran := 0
	err := b.Run(ctx(), name, policy, func(context.Context) (circuit.Outcome, error) {
		ran++
		stop()
		return circuit.Failure, errDown
	})
	var se *circuit.StateError
	if !errors.As(err, &se) || !se.Ran || !errors.Is(err, errDown) || ran != 1 {
		t.Fatalf("Run whose settlement meets the stopped backend = %v (ran %d), want a StateError with Ran, wrapping the call's error", err, ran)
	}
	t.Logf("settlement with the backend stopped: %v", err)

	calls := 0
	for i, outcome := range []circuit.Outcome{circuit.Success, circuit.Failure, circuit.Ignored, circuit.Success, circuit.Success} {
		start := time.Now()
		err := b.Run(ctx(), name, policy, func(context.Context) (circuit.Outcome, error) {
			calls++
			return outcome, nil
		})
		if !errors.As(err, &se) || se.Ran {
			t.Fatalf("call %d with the backend stopped = %v, want a StateError before the call", i, err)
		}
		if d := time.Since(start); d > outageBound {
			t.Errorf("call %d took %v to fail", i, d)
		}
		if i == 0 {
			t.Logf("with the backend stopped: %v (in %v)", err, time.Since(start).Round(time.Millisecond))
		}
	}
	if calls != 0 {
		t.Fatalf("%d calls admitted with the backend stopped, want 0", calls)
	}
}
