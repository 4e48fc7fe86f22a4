package circuit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func TestSnapshot(t *testing.T) {
	b, s, clock := newBreaker(t)
	snap, err := b.Snapshot(t.Context(), testName)
	if err != nil {
		t.Fatal(err)
	}
	if snap != (circuit.Snapshot{Name: testName, State: circuit.StateClosed}) {
		t.Errorf("Snapshot of an absent circuit = %+v", snap)
	}

	openCircuit(t, b, s, pol)
	clock.Advance(time.Hour) // long past the cooldown
	_, replaces, _ := s.counts()
	for range 3 {
		snap, err = b.Snapshot(t.Context(), testName)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, after, _ := s.counts(); after != replaces {
		t.Fatalf("Snapshot wrote the record %d times", after-replaces)
	}
	// The cooldown is over: the circuit reads half-open, ready to probe,
	// though its record still says open.
	want := circuit.Snapshot{Name: testName, State: circuit.StateHalfOpen, Failures: 3, Generation: 1,
		OpenUntil: t0.Add(pol.Cooldown), UpdatedAt: t0, Exists: true}
	if snap != want {
		t.Errorf("Snapshot =\n  %+v\nwant\n  %+v", snap, want)
	}
	if r := s.rec(testName); r.State != circuit.StateOpen {
		t.Errorf("the record is %s, want it still open", fmtRecord(r))
	}
	// Snapshot did not claim the probe: the next call does.
	probe, err := b.Allow(t.Context(), testName, pol)
	if err != nil || !probe.Probe() {
		t.Fatalf("Allow after Snapshots = %v, %v; want the probe", probe, err)
	}
	snap, _ = b.Snapshot(t.Context(), testName)
	if snap.State != circuit.StateHalfOpen || !snap.Probing || !snap.LeaseUntil.Equal(clock.Now().Add(pol.ProbeLease)) || snap.State.String() != "half_open" {
		t.Errorf("Snapshot during the probe = %+v", snap)
	}
	// The probe crashed: once its lease is over, the next call probes anew.
	clock.Advance(pol.ProbeLease)
	if snap, _ = b.Snapshot(t.Context(), testName); snap.State != circuit.StateHalfOpen || snap.Probing {
		t.Errorf("Snapshot after the probe's lease = %+v, want half-open, ready to probe", snap)
	}
	_ = probe.Done(circuit.Success)
	snap, _ = b.Snapshot(t.Context(), testName)
	if snap.State != circuit.StateClosed || snap.Generation != 2 || snap.Failures != 0 || !snap.OpenUntil.IsZero() {
		t.Errorf("Snapshot after recovery = %+v", snap)
	}
}

func TestClear(t *testing.T) {
	b, s, _ := newBreaker(t)
	openCircuit(t, b, s, pol)
	oldInc := s.rec(testName).Incarnation
	if err := b.Clear(t.Context(), testName); err != nil {
		t.Fatal(err)
	}
	if snap, _ := b.Snapshot(t.Context(), testName); snap.State != circuit.StateClosed || snap.Failures != 0 || snap.Generation != 1 {
		t.Fatalf("Snapshot after Clear = %+v, want closed, generation 1, no failures", snap)
	}
	calls := 0
	if err := b.Run(t.Context(), testName, pol, counted(&calls, succeed)); err != nil || calls != 1 {
		t.Fatalf("after Clear: Run = %v after %d calls", err, calls)
	}
	if r := s.rec(testName); r.Incarnation == oldInc || r.Incarnation == driver.FirstIncarnation || r.Generation != 1 {
		t.Errorf("record after Clear: %s, want a new incarnation", fmtRecord(r))
	}
	if err := b.Clear(t.Context(), "other-api"); err != nil {
		t.Errorf("Clear of an absent circuit = %v", err)
	}
	t.Run("cancelled ctx", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.Clear(ctx, testName); !errors.Is(err, context.Canceled) {
			t.Errorf("Clear = %v, want context.Canceled", err)
		}
	})
}
