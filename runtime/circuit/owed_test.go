package circuit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TestOwedOpeningStartsItsCooldownWhenWritten: a failure that opens the
// circuit, refused by the store and owed while a whole cooldown passes,
// opens it when it is written, and its cooldown starts then. Other
// processes could not see the circuit open before: an opening dated back to
// its decision would end at once and let a probe through.
func TestOwedOpeningStartsItsCooldownWhenWritten(t *testing.T) {
	b, s, clock := newBreaker(t)
	ctx := t.Context()
	boom := errors.New("boom")
	for range pol.FailureThreshold - 1 {
		if err := b.Run(ctx, testName, pol, failing(boom)); !errors.Is(err, boom) {
			t.Fatalf("failure: %v", err)
		}
	}
	s.set(func(s *memStore) { s.replaceErr = errors.New("read-only") })
	var se *circuit.StateError
	if err := b.Run(ctx, testName, pol, failing(boom)); !errors.As(err, &se) || !se.Ran {
		t.Fatalf("the opening failure, refused: %v, want a StateError after the call", err)
	}
	clock.Advance(2 * pol.Cooldown)
	ran := 0
	if err := b.Run(ctx, testName, pol, counted(&ran, succeed)); !errors.As(err, &se) || se.Ran || ran != 0 {
		t.Fatalf("a call while the store refuses: %v (ran %d), want a StateError before the call", err, ran)
	}
	s.set(func(s *memStore) { s.replaceErr = nil })
	time.Sleep(300 * time.Millisecond) // the owed write is tried again after owedRetry
	err := b.Run(ctx, testName, pol, counted(&ran, succeed))
	var oe *circuit.OpenError
	if !errors.As(err, &oe) || ran != 0 {
		t.Fatalf("the first call once the store writes: %v (ran %d), want rejected as open", err, ran)
	}
	if oe.RetryAfter() != pol.Cooldown {
		t.Fatalf("RetryAfter %v, want the whole cooldown %v", oe.RetryAfter(), pol.Cooldown)
	}
}
