package circuit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

func TestAllowDone(t *testing.T) {
	b, s, clock := newBreaker(t)
	ticket, err := b.Allow(t.Context(), testName, pol)
	if err != nil || ticket.Probe() {
		t.Fatalf("Allow = %v, %v; want a closed ticket", ticket, err)
	}
	if err := ticket.Done(circuit.Failure); err != nil {
		t.Fatal(err)
	}
	_, replaces, _ := s.counts()
	for _, o := range []circuit.Outcome{circuit.Failure, circuit.Success, circuit.Failure} {
		if err := ticket.Done(o); err != nil {
			t.Fatalf("second Done(%v) = %v", o, err)
		}
	}
	if _, after, _ := s.counts(); after != replaces {
		t.Errorf("Done after the first wrote %d times", after-replaces)
	}
	if r := s.rec(testName); r.Failures != 1 {
		t.Fatalf("after Done twice: %s, want 1 failure", fmtRecord(r))
	}

	for range 2 {
		tk, err := b.Allow(t.Context(), testName, pol)
		if err != nil {
			t.Fatal(err)
		}
		_ = tk.Done(circuit.Failure)
	}
	if _, err := b.Allow(t.Context(), testName, pol); err == nil {
		t.Fatal("Allow on an open circuit admitted the call")
	} else {
		wantOpenError(t, err, circuit.StateOpen)
	}

	clock.Advance(pol.Cooldown)
	probe, err := b.Allow(t.Context(), testName, pol)
	if err != nil || !probe.Probe() {
		t.Fatalf("Allow after cooldown = %v, %v; want the probe", probe, err)
	}
	if err := probe.Done(circuit.Success); err != nil {
		t.Fatal(err)
	}
	if r := s.rec(testName); r.State != circuit.StateClosed || r.Generation != 2 {
		t.Fatalf("after the probe's Done: %s", fmtRecord(r))
	}

	t.Run("Done settles even after Allow's ctx ended", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		tk, err := b.Allow(ctx, testName, pol)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := tk.Done(circuit.Failure); err != nil {
			t.Fatalf("Done = %v", err)
		}
		if r := s.rec(testName); r.Failures != 1 {
			t.Fatalf("the failure was not counted: %s", fmtRecord(r))
		}
	})
}

func TestCall(t *testing.T) {
	b, s, _ := newBreaker(t)
	isFailure := func(v int, err error) circuit.Outcome {
		switch {
		case err != nil:
			return circuit.Failure
		case v >= 500:
			return circuit.Failure
		}
		return circuit.Success
	}
	v, err := circuit.Call(t.Context(), b, testName, pol, isFailure, func(context.Context) (int, error) { return 200, nil })
	if v != 200 || err != nil {
		t.Fatalf("Call = %d, %v; want 200, nil", v, err)
	}
	boom := errors.New("boom")
	v, err = circuit.Call(t.Context(), b, testName, pol, isFailure, func(context.Context) (int, error) { return 7, boom })
	if v != 7 || err != boom {
		t.Fatalf("Call = %d, %v; want 7, boom", v, err)
	}
	var seen int
	classify := func(v int, err error) circuit.Outcome { seen = v; return isFailure(v, err) }
	v, err = circuit.Call(t.Context(), b, testName, pol, classify, func(context.Context) (int, error) { return 503, nil })
	if v != 503 || err != nil || seen != 503 {
		t.Fatalf("Call = %d, %v (classify saw %d); want 503, nil, 503", v, err, seen)
	}
	if r := s.rec(testName); r.Failures != 2 {
		t.Fatalf("after a failing error and a failing result: %s, want 2 failures", fmtRecord(r))
	}
	_, _ = circuit.Call(t.Context(), b, testName, pol, isFailure, func(context.Context) (int, error) { return 500, nil })
	v, err = circuit.Call(t.Context(), b, testName, pol, isFailure, func(context.Context) (int, error) {
		t.Error("the operation was invoked on an open circuit")
		return 1, nil
	})
	if v != 0 {
		t.Errorf("Call on an open circuit returned %d, want the zero value", v)
	}
	wantOpenError(t, err, circuit.StateOpen)

	t.Run("any result type", func(t *testing.T) {
		b, _, _ := newBreaker(t)
		type resp struct{ body string }
		r, err := circuit.Call(t.Context(), b, testName, pol,
			func(*resp, error) circuit.Outcome { return circuit.Success },
			func(context.Context) (*resp, error) { return &resp{"ok"}, nil })
		if err != nil || r == nil || r.body != "ok" {
			t.Fatalf("Call = %v, %v", r, err)
		}
	})
}

// Example-style check that the OpenError message is usable as-is.
func TestOpenErrorMessage(t *testing.T) {
	b, s, _ := newBreaker(t)
	openCircuit(t, b, s, pol)
	err := b.Run(t.Context(), testName, pol, mustNotRun(t))
	if got, want := err.Error(), fmt.Sprintf("circuit %s is open: retry after 30s", testName); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestTicketDoneConcurrently(t *testing.T) {
	b, s, _ := newBreaker(t)
	ticket, err := b.Allow(t.Context(), testName, pol)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := ticket.Done(circuit.Failure); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if r := s.rec(testName); r.Failures != 1 {
		t.Fatalf("8 concurrent Done calls on one ticket: %s, want exactly 1 failure", fmtRecord(r))
	}
}

func TestCircuitAllow(t *testing.T) {
	b, s, clock := newBreaker(t)
	c := b.Circuit(testName, pol)
	if c.Breaker() != b {
		t.Fatalf("Circuit.Breaker = %p, want the Breaker it came from, %p", c.Breaker(), b)
	}
	for range pol.FailureThreshold {
		tk, err := c.Allow(t.Context())
		if err != nil || tk.Probe() {
			t.Fatalf("Circuit.Allow = %v, %v; want a closed ticket", tk, err)
		}
		if err := tk.Done(circuit.Failure); err != nil {
			t.Fatal(err)
		}
	}
	if r := s.rec(testName); r.State != circuit.StateOpen {
		t.Fatalf("after %d failed tickets: %s, want open", pol.FailureThreshold, fmtRecord(r))
	}
	_, err := c.Allow(t.Context())
	wantOpenError(t, err, circuit.StateOpen)
	clock.Advance(pol.Cooldown)
	probe, err := c.Allow(t.Context())
	if err != nil || !probe.Probe() {
		t.Fatalf("Circuit.Allow after the cooldown = %v, %v; want the probe", probe, err)
	}
	if err := probe.Done(circuit.Success); err != nil {
		t.Fatal(err)
	}
	if r := s.rec(testName); r.State != circuit.StateClosed {
		t.Fatalf("after the probe: %s, want closed", fmtRecord(r))
	}
	bad := b.Circuit("not a name", pol)
	var ce *circuit.ConfigError
	if _, err := bad.Allow(t.Context()); !errors.As(err, &ce) {
		t.Errorf("Allow of an invalid circuit = %v, want a *ConfigError", err)
	}
	badPolicy := b.Circuit(testName, circuit.Policy{FailureThreshold: -1})
	if _, err := badPolicy.Allow(t.Context()); !errors.As(err, &ce) {
		t.Errorf("Allow under an invalid policy = %v, want a *ConfigError", err)
	}
	if bad.Name() != "not a name" || badPolicy.Name() != testName {
		t.Errorf("Name() of the invalid circuits = %q, %q", bad.Name(), badPolicy.Name())
	}
}
