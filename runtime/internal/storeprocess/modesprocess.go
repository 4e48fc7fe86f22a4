package storeprocess

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// The multi-process checks of the modes, run by Processes:
//
//   - CountWindow: under a rate rule over the last 4 calls, six successes
//     and three failures spread over four processes open the circuit with
//     the third failure on a store that is a driver.CallWindowStore (one
//     window for all), and leave it closed on any other (each process
//     counts its own calls); there, the same calls made by one process
//     open it, for every process;
//   - ForcedClosed: while the test process holds the circuit closed, the
//     failures of every helper count nothing; ForceOpen over the hold
//     rejects them all, ForceClosed over that admits them again, and once
//     the hold ends a failure opens the circuit;
//   - ObserveOnly: helpers whose circuit observes only run the calls it
//     would reject, each hearing the rejection, and change nothing; after
//     the cooldown exactly one of them, across processes, claims the
//     probe, and its success closes the circuit.

// lastFour is the rate rule of CountWindow: 3 of the last 4 calls failed.
const lastFour = "threshold=0 rate=0.75 min_calls=4 window_calls=4 cooldown=1m"

func testCountWindow(t *testing.T, cfg ProcessConfig) {
	s, hs := shareStore(t, cfg, 4)
	_, shared := s.(driver.CallWindowStore)
	// calls has the helpers make the calls of outcomes, in turn from the
	// first of hs, and fails unless the circuit is still closed after each
	// but the last, which must leave it open when opens is set.
	calls := func(hs []*helper, outcomes string, opens bool) {
		t.Helper()
		for i, o := range outcomes {
			outcome := map[rune]string{'s': "success", 'f': "failure"}[o]
			if got := call(hs[i%len(hs)], outcome, lastFour); got != "ok" {
				t.Fatalf("call %d (%s): %q", i, outcome, got)
			}
			rec, _ := loadShared(t, s)
			last := i == len(outcomes)-1
			if open := stateOf(rec) != circuit.StateClosed; open != (last && opens) {
				t.Fatalf("after call %d of %q: %+v; want open %t", i, outcomes, rec, last && opens)
			}
		}
	}
	// The last 4 of the calls are a success and three failures: 75%, of 4
	// calls, though 3 of 9 failed.
	const spread = "ssssssfff"
	calls(hs, spread, shared)
	if !shared {
		t.Logf("%T keeps no count windows: each process counts its own calls", s)
		calls(hs[1:2], spread, true)
	}
	time.Sleep(cfg.Propagation)
	for i, h := range hs {
		if got := call(h, "success", lastFour); !strings.HasPrefix(got, "open open ") {
			t.Errorf("helper %d after the opening: %q, want rejected", i, got)
		}
	}
}

func testForcedClosed(t *testing.T, cfg ProcessConfig) {
	s, hs := shareStore(t, cfg, 4)
	b := circuit.New(s)
	ctx := t.Context()
	force := func(f func() error) *driver.Record {
		t.Helper()
		if err := f(); err != nil {
			t.Fatal(err)
		}
		rec, _ := loadShared(t, s)
		time.Sleep(cfg.Propagation)
		return rec
	}
	const one = "threshold=1 cooldown=1m"
	held := force(func() error { return b.ForceClosed(ctx, circuitName, time.Hour) })
	for i, h := range hs {
		for range 2 {
			if got := call(h, "failure", one); got != "ok" {
				t.Fatalf("helper %d while held closed: %q, want its call run", i, got)
			}
		}
	}
	if rec, _ := loadShared(t, s); !driver.SameRevision(rec, held) {
		t.Fatalf("failures while held closed changed the record: %+v, was %+v", rec, held)
	}

	opened := force(func() error { return b.ForceOpen(ctx, circuitName, time.Hour) })
	want := fmt.Sprintf("open open %d", opened.OpenUntil.UnixNano())
	for i, h := range hs {
		if got := call(h, "success", one); got != want {
			t.Errorf("helper %d over ForceOpen over ForceClosed: %q, want %q", i, got, want)
		}
	}

	held = force(func() error { return b.ForceClosed(ctx, circuitName, time.Second) })
	for i, h := range hs {
		if got := call(h, "failure", one); got != "ok" {
			t.Fatalf("helper %d over ForceClosed over ForceOpen: %q, want its call run", i, got)
		}
	}
	// Past the hold by the server's clock, and by the clock a process
	// decides on its copies by: the server's as a read last returned it,
	// carried forward from the reply's arrival, so behind by that read's
	// latency (copies.Cache.Now), within Propagation.
	_, now := loadShared(t, s)
	time.Sleep(held.OpenUntil.Sub(now) + cfg.Propagation + 10*time.Millisecond)
	if got := call(hs[0], "failure", one); got != "ok" {
		t.Fatalf("a failure after the hold: %q", got)
	}
	if rec, _ := loadShared(t, s); rec.State != circuit.StateOpen || rec.Forced {
		t.Fatalf("a failure at the threshold after the hold: %+v, want open", rec)
	}
}

func testObserveOnly(t *testing.T, cfg ProcessConfig) {
	s, hs := shareStore(t, cfg, 5)
	const spec = "observe_only=true cooldown=1m"
	if got := call(hs[0], "failure", spec); got != "ok" { // opens: threshold 1
		t.Fatalf("the failure that opens: %q", got)
	}
	opened, _ := loadShared(t, s)
	if opened.State != circuit.StateOpen {
		t.Fatalf("after a failure at the threshold: %+v, want open", opened)
	}
	time.Sleep(cfg.Propagation)
	for i, h := range hs {
		for _, o := range []string{"success", "failure"} {
			if got := call(h, o, spec); got != "ok would-reject open" {
				t.Fatalf("helper %d, a %s on the open circuit: %q, want run and heard", i, o, got)
			}
		}
	}
	if rec, _ := loadShared(t, s); !driver.SameRevision(rec, opened) {
		t.Fatalf("calls an open observe-only circuit would reject changed it: %+v, was %+v", rec, opened)
	}

	// After the cooldown every helper's call runs and holds until told to
	// finish; exactly one of them is the probe.
	if err := circuit.New(s).Clear(t.Context(), circuitName); err != nil {
		t.Fatal(err)
	}
	opened = openPast(t, s)
	time.Sleep(cfg.Propagation)
	for _, h := range hs {
		h.send(runCommand(time.Minute) + " " + spec)
	}
	for _, h := range hs {
		h.expect("ran")
	}
	probe, _ := loadShared(t, s)
	if probe.State != circuit.StateHalfOpen || probe.ProbeToken == "" {
		t.Fatalf("while every helper's call runs: %+v, want half_open with one probe", probe)
	}
	probes := 0
	for _, h := range hs {
		h.send("finish")
		switch got := h.recv(); got {
		case "ok":
			probes++
		case "ok would-reject half_open":
		default:
			t.Fatalf("helper process %d said %q, want ok", h.pid(), got)
		}
	}
	if probes != 1 {
		t.Fatalf("%d helper processes' calls were admitted after the cooldown, want 1 (the probe)", probes)
	}
	wantClosed(t, s, opened.Generation+1)
}
