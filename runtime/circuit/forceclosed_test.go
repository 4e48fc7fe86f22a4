package circuit_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TestForceClosed: while an operator holds a circuit closed, every call is
// admitted without reading the clock, and no outcome counts or opens it;
// when the hold ends the circuit is plainly closed with nothing counted.
func TestForceClosed(t *testing.T) {
	var reads atomic.Int32
	clock := newClock()
	s := newMemStore(t, clock)
	b := circuit.New(s, circuit.WithClock(func() time.Time { reads.Add(1); return clock.Now() }))
	ctx := t.Context()
	boom := errors.New("boom")
	one := pol
	one.FailureThreshold = 1
	openCircuit(t, b, s, one)
	opened := s.rec(testName)

	if err := b.ForceClosed(ctx, testName, time.Hour); err != nil {
		t.Fatal(err)
	}
	held := s.rec(testName)
	if held.State != circuit.StateClosed || !held.Forced || !held.OpenUntil.Equal(t0.Add(time.Hour)) ||
		held.Failures != 0 || held.Generation != opened.Generation+1 {
		t.Fatalf("after ForceClosed: %s, want closed, forced until t0+1h, no failures, the next generation", fmtRecord(held))
	}
	snap, err := b.Snapshot(ctx, testName)
	if err != nil || snap.State != circuit.StateClosed || !snap.Forced || !snap.OpenUntil.Equal(t0.Add(time.Hour)) {
		t.Errorf("Snapshot = %+v, %v; want closed, forced until t0+1h", snap, err)
	}

	// Failures, at the threshold and past it, count nothing; successes and
	// admissions read no clock, settlements read it once each.
	reads.Store(0)
	_, writes, _ := s.counts()
	for range 5 {
		if err := b.Run(ctx, testName, one, failing(boom)); err != boom {
			t.Fatalf("a failing call while held closed = %v, want its own error", err)
		}
		tk, err := b.Allow(ctx, testName, one)
		if err != nil {
			t.Fatalf("Allow while held closed = %v", err)
		}
		if err := tk.Done(circuit.Success); err != nil {
			t.Fatal(err)
		}
	}
	if _, after, _ := s.counts(); after != writes {
		t.Errorf("calls while held closed wrote %d records, want none", after-writes)
	}
	if n := reads.Load(); n != 10 {
		t.Errorf("10 calls while held closed read the clock %d times, want 10 (once a settlement, never to admit)", n)
	}
	if r := s.rec(testName); *r != *held {
		t.Errorf("record changed while held: %s", fmtRecord(r))
	}

	t.Run("the end of the hold: plainly closed, nothing counted", func(t *testing.T) {
		clock.Set(held.OpenUntil)
		if snap, err := b.Snapshot(ctx, testName); err != nil || snap.State != circuit.StateClosed || snap.Forced {
			t.Errorf("Snapshot at the end of the hold = %+v, %v; want closed, not forced", snap, err)
		}
		if err := b.Run(ctx, testName, one, succeed); err != nil {
			t.Fatal(err)
		}
		r := s.rec(testName)
		if r.State != circuit.StateClosed || r.Forced || !r.OpenUntil.IsZero() || r.Failures != 0 || r.Generation != held.Generation {
			t.Fatalf("after the hold's first call: %s, want plainly closed", fmtRecord(r))
		}
		reads.Store(0)
		if err := b.Run(ctx, testName, one, succeed); err != nil || reads.Load() != 0 {
			t.Fatalf("a healthy call after the hold = %v, read the clock %d times; want nil, 0", err, reads.Load())
		}
		if err := b.Run(ctx, testName, one, failing(boom)); err != boom {
			t.Fatal(err)
		}
		if r := s.rec(testName); r.State != circuit.StateOpen {
			t.Fatalf("a failure at the threshold after the hold: %s, want open", fmtRecord(r))
		}
	})
	t.Run("ForceOpen and ForceClosed replace each other", func(t *testing.T) {
		if err := b.ForceClosed(ctx, testName, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := b.ForceOpen(ctx, testName, time.Minute); err != nil {
			t.Fatal(err)
		}
		err := b.Run(ctx, testName, one, mustNotRun(t))
		if oe := wantOpenError(t, err, circuit.StateOpen); !oe.Forced {
			t.Errorf("Run over ForceOpen over ForceClosed = %v, want forced open", err)
		}
		if err := b.ForceClosed(ctx, testName, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := b.Run(ctx, testName, one, failing(boom)); err != boom {
			t.Fatalf("Run over ForceClosed over ForceOpen = %v, want the operation's error", err)
		}
		if r := s.rec(testName); r.State != circuit.StateClosed || !r.Forced {
			t.Errorf("record = %s, want held closed", fmtRecord(r))
		}
	})
	t.Run("a call admitted before the hold changes nothing", func(t *testing.T) {
		if err := b.Clear(ctx, testName); err != nil {
			t.Fatal(err)
		}
		tk, err := b.Allow(ctx, testName, one)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.ForceClosed(ctx, testName, time.Second); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second) // the hold is over; the call is of the generation before it
		if err := tk.Done(circuit.Failure); err != nil {
			t.Fatal(err)
		}
		if r := s.rec(testName); r.State != circuit.StateClosed || !r.Forced {
			t.Errorf("record = %s, want still held closed (the hold ended, no call since)", fmtRecord(r))
		}
	})
	t.Run("Clear ends it", func(t *testing.T) {
		if err := b.ForceClosed(ctx, testName, time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := b.Clear(ctx, testName); err != nil {
			t.Fatal(err)
		}
		if err := b.Run(ctx, testName, one, failing(boom)); err != boom {
			t.Fatal(err)
		}
		if r := s.rec(testName); r.State != circuit.StateOpen {
			t.Errorf("a failure at the threshold after Clear: %s, want open", fmtRecord(r))
		}
	})
	t.Run("bad input", func(t *testing.T) {
		loads, _, _ := s.counts()
		for _, d := range []time.Duration{0, 999 * time.Millisecond, 24*time.Hour + 1} {
			var ce *circuit.ConfigError
			if err := b.ForceClosed(ctx, testName, d); !errors.As(err, &ce) || !strings.Contains(err.Error(), "ForceClosed duration") {
				t.Errorf("ForceClosed(%v) = %v, want a *ConfigError naming ForceClosed", d, err)
			}
		}
		if err := b.ForceClosed(ctx, "9lives", time.Minute); !errors.As(err, new(*circuit.ConfigError)) {
			t.Errorf("ForceClosed(bad name) = %v, want a *ConfigError", err)
		}
		if after, _, _ := s.counts(); after != loads {
			t.Error("a bad ForceClosed reached the store")
		}
	})
}

// TestForceClosedRateRule: failures while held closed never enter the
// window of the rate rule, so they cannot open the circuit once the hold
// ends.
func TestForceClosedRateRule(t *testing.T) {
	for _, p := range []circuit.Policy{rateOnlyPol, calls(4, 4)} {
		b, s, clock := newBreaker(t)
		ctx := t.Context()
		boom := errors.New("boom")
		if err := b.ForceClosed(ctx, testName, time.Second); err != nil {
			t.Fatal(err)
		}
		for range 10 {
			_ = b.Run(ctx, testName, p, failing(boom))
		}
		clock.Advance(time.Second)
		if err := b.Run(ctx, testName, p, failing(boom)); err != boom {
			t.Fatal(err)
		}
		if r := s.rec(testName); r.State != circuit.StateClosed || r.Forced {
			t.Errorf("%+v: after 10 failures held and 1 after: %s, want plainly closed", p, fmtRecord(r))
		}
	}
}
