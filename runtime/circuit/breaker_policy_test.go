package circuit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

func TestForceOpen(t *testing.T) {
	b, s, clock := newBreaker(t)
	ctx := t.Context()
	if err := b.ForceOpen(ctx, testName, time.Minute); err != nil {
		t.Fatal(err)
	}
	err := b.Run(ctx, testName, pol, mustNotRun(t))
	var oe *circuit.OpenError
	if !errors.As(err, &oe) || !oe.Forced || !oe.Until.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Run on a forced circuit = %v, want a forced *OpenError until t0+1m", err)
	}
	if !strings.Contains(err.Error(), "forced open") {
		t.Errorf("Error() = %q, want it to say forced open", err)
	}
	if snap, _ := b.Snapshot(ctx, testName); !snap.Forced || snap.State != circuit.StateOpen {
		t.Errorf("Snapshot = %+v, want forced open", snap)
	}

	t.Run("Clear ends it", func(t *testing.T) {
		if err := b.Clear(ctx, testName); err != nil {
			t.Fatal(err)
		}
		if err := b.Run(ctx, testName, pol, succeed); err != nil {
			t.Errorf("Run after Clear = %v", err)
		}
	})
	t.Run("the end of d ends it with a probe", func(t *testing.T) {
		if err := b.ForceOpen(ctx, testName, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		clock.Advance(2 * time.Second)
		if snap, _ := b.Snapshot(ctx, testName); snap.Forced || snap.State != circuit.StateHalfOpen || snap.Probing {
			t.Errorf("Snapshot at the end of d = %+v, want half-open, ready to probe, not forced", snap)
		}
		tk, err := b.Allow(ctx, testName, pol)
		if err != nil || !tk.Probe() {
			t.Fatalf("Allow at the end of d = %v, %v; want the probe", tk, err)
		}
		if err := tk.Done(circuit.Success); err != nil {
			t.Fatal(err)
		}
		if r := s.rec(testName); r.State != circuit.StateClosed || r.Forced {
			t.Errorf("record after the probe: %s", fmtRecord(r))
		}
	})
	t.Run("a probe in flight loses its claim", func(t *testing.T) {
		openCircuit(t, b, s, pol)
		clock.Advance(pol.Cooldown)
		tk, err := b.Allow(ctx, testName, pol)
		if err != nil || !tk.Probe() {
			t.Fatalf("Allow = %v, %v; want the probe", tk, err)
		}
		if err := b.ForceOpen(ctx, testName, time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := tk.Done(circuit.Success); err != nil {
			t.Fatal(err)
		}
		if r := s.rec(testName); r.State != circuit.StateOpen || !r.Forced {
			t.Errorf("record after the stale probe: %s, want still forced open", fmtRecord(r))
		}
	})
	t.Run("bad input", func(t *testing.T) {
		_, _, before := s.counts()
		loads, _, _ := s.counts()
		for _, d := range []time.Duration{0, 999 * time.Millisecond, (24 * time.Hour) + 1} {
			var ce *circuit.ConfigError
			if err := b.ForceOpen(ctx, testName, d); !errors.As(err, &ce) {
				t.Errorf("ForceOpen(%v) = %v, want a *ConfigError", d, err)
			}
		}
		var ce *circuit.ConfigError
		if err := b.ForceOpen(ctx, "9lives", time.Minute); !errors.As(err, &ce) {
			t.Errorf("ForceOpen(bad name) = %v, want a *ConfigError", err)
		}
		if after, _, deletes := s.counts(); after != loads || deletes != before {
			t.Error("a bad ForceOpen reached the store")
		}
	})
}

func TestSlowCall(t *testing.T) {
	b, s, clock := newBreaker(t)
	ctx := t.Context()
	p := pol
	p.FailureThreshold = 2
	p.SlowCall = time.Second
	slow := func(d time.Duration) op {
		return func(context.Context) (circuit.Outcome, error) {
			clock.Advance(d)
			return circuit.Success, nil
		}
	}
	if err := b.Run(ctx, testName, p, slow(time.Second)); err != nil {
		t.Fatal(err)
	}
	if r := s.rec(testName); r.Failures != 0 {
		t.Fatalf("a call of exactly SlowCall counted as a failure: %s", fmtRecord(r))
	}
	if err := b.Run(ctx, testName, p, slow(time.Second+time.Millisecond)); err != nil {
		t.Fatalf("a slow success must still return its own result, got %v", err)
	}
	if r := s.rec(testName); r.Failures != 1 {
		t.Fatalf("a slow success did not count as a failure: %s", fmtRecord(r))
	}
	tk, err := b.Allow(ctx, testName, p)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second)
	if err := tk.Done(circuit.Success); err != nil {
		t.Fatal(err)
	}
	if r := s.rec(testName); r.State != circuit.StateOpen {
		t.Fatalf("a slow two-step success did not open the circuit at the threshold: %s", fmtRecord(r))
	}
}

// TestRateRuleInProcess opens a circuit on its failure rate, with a store
// that keeps no window: the Breaker counts in its own memory.
func TestRateRuleInProcess(t *testing.T) {
	b, s, clock := newBreaker(t)
	ctx := t.Context()
	p := rateOnlyPol // 50% of at least 4 calls in a minute
	boom := errors.New("boom")
	for _, o := range []op{succeed, failing(boom), succeed} {
		_ = b.Run(ctx, testName, p, o)
		clock.Advance(time.Second)
	}
	if r := s.rec(testName); r.State != circuit.StateClosed {
		t.Fatalf("open below MinCalls: %s", fmtRecord(r))
	}
	_, writes, _ := s.counts()
	if err := b.Run(ctx, testName, p, failing(boom)); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if r := s.rec(testName); r.State != circuit.StateOpen {
		t.Fatalf("2 failures in 4 calls did not open the circuit: %s", fmtRecord(r))
	}
	if _, after, _ := s.counts(); after != writes+1 {
		t.Errorf("the rate rule wrote %d times, want once (the opening)", after-writes)
	}
	t.Run("closing starts a fresh window", func(t *testing.T) {
		clock.Advance(p.Cooldown)
		for range p.CloseAfter {
			if err := b.Run(ctx, testName, p, succeed); err != nil {
				t.Fatal(err)
			}
		}
		if r := s.rec(testName); r.State != circuit.StateClosed {
			t.Fatalf("not closed after CloseAfter probes: %s", fmtRecord(r))
		}
		if err := b.Run(ctx, testName, p, failing(boom)); !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if r := s.rec(testName); r.State != circuit.StateClosed {
			t.Fatalf("the failures of the last closed period reopened the circuit: %s", fmtRecord(r))
		}
	})
}

// TestRateRuleBucketsByTheLocalClock: with the local clock, successes are
// counted in the bucket that holds them without reading the clock, and the
// bucket moves on when it ends: successes made over more than a window keep
// filling its latest buckets, so that 25 failures after them are a low rate
// (were they all counted in the first bucket, the failures alone would be
// the window, and open it).
func TestRateRuleBucketsByTheLocalClock(t *testing.T) {
	b, s := localBreaker(t)
	ctx := t.Context()
	p := circuit.Policy{FailureRate: 0.5, MinCalls: 20, Window: time.Second, Cooldown: time.Minute, ProbeLease: time.Second}
	n := 0
	for end := time.Now().Add(1300 * time.Millisecond); time.Now().Before(end); n++ {
		if err := b.Run(ctx, testName, p, succeed); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("boom")
	for range 25 {
		if err := b.Run(ctx, testName, p, failing(boom)); !errors.Is(err, boom) {
			t.Fatalf("after %d successes over 1.3s: %v", n, err)
		}
	}
	if r := s.rec(testName); r != nil && r.State != circuit.StateClosed {
		t.Fatalf("25 failures after %d successes over 1.3s opened a 1s window: %s", n, fmtRecord(r))
	}
}

func TestGrowingCooldown(t *testing.T) {
	b, s, clock := newBreaker(t)
	ctx := t.Context()
	p := pol
	p.MaxCooldown = 100 * time.Second
	boom := errors.New("boom")
	openCircuit(t, b, s, p)
	for _, want := range []time.Duration{60 * time.Second, 100 * time.Second, 100 * time.Second} {
		clock.Set(s.rec(testName).OpenUntil)
		if err := b.Run(ctx, testName, p, failing(boom)); !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if r := s.rec(testName); !r.OpenUntil.Equal(clock.Now().Add(want)) {
			t.Fatalf("probe failure reopened until %s, want now+%v", fmtRecord(r), want)
		}
	}
	clock.Set(s.rec(testName).OpenUntil)
	if err := b.Run(ctx, testName, p, succeed); err != nil {
		t.Fatal(err)
	}
	openCircuit(t, b, s, p)
	if r := s.rec(testName); !r.OpenUntil.Equal(clock.Now().Add(p.Cooldown)) || r.Reopens != 0 {
		t.Errorf("closing did not reset the cooldown: %s", fmtRecord(r))
	}
}

// TestZeroPolicyIsDefault: a zero Policy, or one whose defaulted fields are
// zero, runs as DefaultPolicy: five failures open the circuit for thirty
// seconds.
func TestZeroPolicyIsDefault(t *testing.T) {
	for _, p := range []circuit.Policy{{}, {Cooldown: 30 * time.Second}, {FailureThreshold: 5}} {
		b, s, clock := newBreaker(t)
		boom := errors.New("boom")
		for i := range 5 {
			if r := s.rec(testName); r != nil && r.State != circuit.StateClosed {
				t.Fatalf("%+v: open after %d failures, want 5", p, i)
			}
			if err := b.Run(t.Context(), testName, p, failing(boom)); !errors.Is(err, boom) {
				t.Fatalf("%+v: failing call = %v", p, err)
			}
		}
		r := s.rec(testName)
		if r == nil || r.State != circuit.StateOpen || !r.OpenUntil.Equal(clock.Now().Add(circuit.DefaultPolicy.Cooldown)) {
			t.Fatalf("%+v: after 5 failures %s, want open for DefaultPolicy.Cooldown", p, fmtRecord(r))
		}
	}
}

// TestPolicyRevalidated: a circuit called with another policy than the one
// it last validated checks the new one, so a bad policy is never excused by
// an earlier good one.
func TestPolicyRevalidated(t *testing.T) {
	b, _, _ := newBreaker(t)
	if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
		t.Fatal(err)
	}
	bad := pol
	bad.Cooldown = time.Millisecond
	var ce *circuit.ConfigError
	if err := b.Run(t.Context(), testName, bad, mustNotRun(t)); !errors.As(err, &ce) || ce.Field != "Cooldown" {
		t.Fatalf("Run with a bad policy after a good one = %v, want a *ConfigError for Cooldown", err)
	}
	if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
		t.Fatalf("Run with the good policy again = %v", err)
	}
}
