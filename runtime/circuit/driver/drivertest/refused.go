package drivertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// refusedRecovery bounds how long after a store accepts writes again a
// circuit that owed it a write admits calls again.
const refusedRecovery = 5 * time.Second

// testRefusedWrite checks that a store that refuses writes never keeps a
// circuit closed: a failure whose settlement cannot be written is a
// StateError after the call, every later call is a StateError before it
// runs while the store refuses, and once it accepts writes again the owed
// failure is recorded and calls are admitted.
func testRefusedWrite(t *testing.T, cfg Config) {
	s := cfg.Open(t)
	b := circuit.New(s)
	ctx := t.Context()
	if err := b.Run(ctx, circuitName, policy, fail); !errors.Is(err, errDown) {
		t.Fatalf("first failure: Run = %v, want the operation's error", err)
	}
	restore := cfg.RefuseWrites(t, s)
	restored := false
	defer func() {
		if !restored {
			restore()
		}
	}()

	err := b.Run(ctx, circuitName, policy, fail)
	var se *circuit.StateError
	if !errors.As(err, &se) || !se.Ran || !errors.Is(err, errDown) {
		t.Fatalf("failure whose settlement is refused: Run = %v, want a StateError with Ran, wrapping the call's error", err)
	}
	t.Logf("settlement refused: %v", err)
	ran := 0
	for i := range 2 * policy.FailureThreshold {
		err := b.Run(ctx, circuitName, policy, func(context.Context) (circuit.Outcome, error) {
			ran++
			return circuit.Failure, errDown
		})
		if !errors.As(err, &se) || se.Ran {
			t.Fatalf("call %d while the store refuses writes: Run = %v, want a StateError before the call", i+1, err)
		}
	}
	if ran != 0 {
		t.Fatalf("%d calls ran while the store refused writes, want 0", ran)
	}

	restore()
	restored = true
	deadline := time.Now().Add(refusedRecovery)
	for {
		err := b.Run(ctx, circuitName, policy, fail)
		if errors.Is(err, errDown) && !errors.As(err, &se) {
			break
		}
		if !errors.As(err, &se) || se.Ran || time.Now().After(deadline) {
			t.Fatalf("after the store accepts writes again: Run = %v, want the call admitted within %v", err, refusedRecovery)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The owed failure was written before the call was admitted: with it,
	// that call's failure is the third in a row, and opens the circuit.
	if snap := snapshot(t, b); snap.State != circuit.StateOpen || snap.Failures != policy.FailureThreshold {
		t.Fatalf("after the owed failure and one more: %v with %d failures, want open with %d", snap.State, snap.Failures, policy.FailureThreshold)
	}
}
