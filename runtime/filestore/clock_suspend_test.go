//go:build linux

package filestore

import (
	"context"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// resumedFromSuspend puts s in the state a process is in just after the
// system resumed from a suspend of d that began right after s last read the
// boot clock: CLOCK_BOOTTIME and the wall clock moved on by d, but Go's
// monotonic clock (CLOCK_MONOTONIC on linux, mach_absolute_time on darwin),
// which Now advances the store's clock by between readings, did not.
func resumedFromSuspend(t *testing.T, s *Store, d time.Duration) {
	t.Helper()
	st := s.syncClock()
	s.clk.Store(&clockState{anchor: st.anchor, boot: st.boot - d, mono: st.mono, skew: st.skew - int64(d)})
}

// TestResumedProcessDatesDeadlinesByTheBootClock: a process whose system
// has just resumed from a suspend (a laptop lid, a paused VM) must not
// decide by the store clock it advanced with its monotonic clock, which did
// not count the suspend: a circuit it opens with a 10-minute cooldown must
// be open for 10 minutes to every other process.
func TestResumedProcessDatesDeadlinesByTheBootClock(t *testing.T) {
	ctx := context.Background()
	dir := shmDir(t)
	other := openDir(t, dir)   // a process that was not suspended
	resumed := openDir(t, dir) // the process that just resumed
	bo := circuit.New(other)
	br := circuit.New(resumed)
	p := circuit.Policy{FailureThreshold: 1, Cooldown: 10 * time.Minute, ProbeLease: 10 * time.Second}
	const name = "payments"
	ran := false
	if err := bo.Run(ctx, name, p, succeedOp(&ran)); err != nil || !ran {
		t.Fatal(err)
	}
	resumedFromSuspend(t, resumed, time.Hour)
	lag := other.Now().Sub(resumed.Now())
	t.Logf("the resumed process's store clock is %v behind the other's", lag)

	if err := br.Run(ctx, name, p, failOp); err != errBoom {
		t.Fatal(err)
	}
	snap, _ := bo.Snapshot(ctx, name)
	t.Logf("after the failure: %+v; the other's now %v", snap, other.Now())
	ran = false
	err := bo.Run(ctx, name, p, succeedOp(&ran))
	if ran {
		t.Fatalf("a circuit opened a moment ago with a 10m cooldown admitted a call in another process (err %v): "+
			"its OpenUntil %v is %v before the other's now", err, snap.OpenUntil, other.Now().Sub(snap.OpenUntil))
	}
}

// TestResumedProcessLeasesByTheBootClock: a probe claimed by a process just
// resumed from a suspend longer than the lease must hold a live lease for
// every other process: no second probe while the first is in flight.
func TestResumedProcessLeasesByTheBootClock(t *testing.T) {
	ctx := context.Background()
	dir := shmDir(t)
	other := openDir(t, dir)
	resumed := openDir(t, dir)
	bo := circuit.New(other)
	br := circuit.New(resumed)
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second}
	const name = "payments"
	if err := bo.Run(ctx, name, p, failOp); err != errBoom {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)                           // the cooldown ended 2s ago
	resumedFromSuspend(t, resumed, 1500*time.Millisecond) // a suspend longer than the lease
	probe, err := br.Allow(ctx, name, p)                  // the resumed process's probe, in flight
	if err != nil || !probe.Probe() {
		t.Fatalf("resumed process: %v, probe %v", err, probe != nil && probe.Probe())
	}
	defer probe.Done(circuit.Success)
	second, err := bo.Allow(ctx, name, p)
	if err == nil {
		defer second.Done(circuit.Success)
		t.Fatalf("a second call admitted (probe %v) while the first probe is in flight in another process", second.Probe())
	}
}

// TestResyncStoppedBeforeTheBootClock: a process stopped after Now read
// the monotonic clock and before the resync read the boot clock does not
// run its clock ahead of another process's, which would end that one's
// cooldowns and leases early here. It may run behind until it resyncs.
func TestResyncStoppedBeforeTheBootClock(t *testing.T) {
	dir := shmDir(t)
	a, b := openDir(t, dir), openDir(t, dir)
	a.Now()
	b.Now()
	read := bootReading
	t.Cleanup(func() { bootReading = read })
	bootReading = func() (time.Duration, error) {
		time.Sleep(300 * time.Millisecond) // stopped
		return read()
	}
	b.clk.Store(nil) // its next Now resyncs
	b.Now()
	bootReading = read
	if d := b.Now().Sub(a.Now()); d > 50*time.Millisecond {
		t.Fatalf("after a resync stopped for 300ms, b's clock is %v ahead of a's", d)
	}
}
