package storeprocess

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// The multi-process checks of the policies, run by Processes:
//
//   - SharedWindow (stores that are a driver.WindowStore or a
//     driver.WindowSharer): four processes, each of which alone stays below
//     MinCalls, open the circuit together on its failure rate: at once with
//     a WindowStore, within 2×driver.FlushEvery of the calls that justify
//     it with a WindowSharer;
//   - CloseAfter: under CloseAfter 3, each of three rounds of calls from
//     every helper at once admits exactly one probe, and the third success
//     closes the circuit;
//   - GrowingCooldown: each probe failure reopens the circuit for a
//     cooldown doubled up to MaxCooldown, and every helper is rejected until
//     the same deadline; a probe success resets it.

// policyCommand returns p changed by the "key=value" words of spec, the
// directive keys: threshold, rate, min_calls, window, window_calls,
// cooldown, max_cooldown, close_after, observe_only; and
// "outcome=success|failure".
func policyCommand(p circuit.Policy, spec string) (circuit.Policy, circuit.Outcome, error) {
	o := circuit.Success
	for _, kv := range strings.Fields(spec) {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "outcome":
			o = map[string]circuit.Outcome{"success": circuit.Success, "failure": circuit.Failure}[v]
		case "threshold":
			p.FailureThreshold, err = strconv.Atoi(v)
		case "rate":
			p.FailureRate, err = strconv.ParseFloat(v, 64)
		case "min_calls":
			p.MinCalls, err = strconv.Atoi(v)
		case "close_after":
			p.CloseAfter, err = strconv.Atoi(v)
		case "window":
			p.Window, err = time.ParseDuration(v)
		case "window_calls":
			p.WindowCalls, err = strconv.Atoi(v)
		case "observe_only":
			p.ObserveOnly, err = strconv.ParseBool(v)
		case "cooldown":
			p.Cooldown, err = time.ParseDuration(v)
		case "max_cooldown":
			p.MaxCooldown, err = time.ParseDuration(v)
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return p, o, err
		}
	}
	return p, o, nil
}

// call has h make one immediate call with outcome o under the policy spec
// and returns its answer.
func call(h *helper, o, spec string) string {
	h.t.Helper()
	h.send(fmt.Sprintf("call %d outcome=%s %s", time.Minute, o, spec))
	return h.recv()
}

func testSharedWindow(t *testing.T, cfg ProcessConfig) {
	s, hs := shareStore(t, cfg, 4)
	_, shared := s.(driver.WindowStore)
	_, batched := s.(driver.WindowSharer)
	if !shared && !batched {
		t.Skipf("%T keeps no window counts of its own: each process's rate rule sees its own calls", s)
	}
	// 50% of at least 8 calls: each helper makes 2, one of them failed.
	const spec = "threshold=0 rate=0.5 min_calls=8 window=1m cooldown=1m"
	for i, h := range hs {
		if got := call(h, "success", spec); got != "ok" {
			t.Fatalf("helper %d: success = %q", i, got)
		}
		if got := call(h, "failure", spec); got != "ok" {
			t.Fatalf("helper %d: failure = %q", i, got)
		}
		rec, _ := loadShared(t, s)
		switch state := stateOf(rec); {
		case i < len(hs)-1 && state != circuit.StateClosed:
			t.Fatalf("open after %d of 8 calls: %+v", 2*(i+1), rec)
		case i == len(hs)-1 && shared && state != circuit.StateOpen:
			t.Fatalf("4 failures in 8 calls from 4 processes did not open the circuit: %+v", rec)
		}
	}
	if batched {
		// The counts reach the server in batches: the opening is justified
		// now, and must be made by the failures that follow within
		// 2×FlushEvery (each process flushes once FlushEvery has passed).
		justified := time.Now()
		time.Sleep(driver.FlushEvery)
		opened := false
		for i := 0; !opened && i < 2*len(hs); i++ {
			got := call(hs[i%len(hs)], "failure", spec)
			opened = strings.HasPrefix(got, "open ")
			if rec, _ := loadShared(t, s); stateOf(rec) == circuit.StateOpen {
				opened = true
			}
		}
		if took := time.Since(justified); !opened || took > 2*driver.FlushEvery+time.Second {
			t.Fatalf("opened %t, %v after the opening was justified; want opened within 2×FlushEvery", opened, took)
		}
	}
	time.Sleep(cfg.Propagation) // a store with copies sees the opening once its invalidation arrives
	for i, h := range hs {
		if got := call(h, "success", spec); !strings.HasPrefix(got, "open open ") {
			t.Errorf("helper %d after the opening: %q, want rejected", i, got)
		}
	}
}

func testCloseAfter(t *testing.T, cfg ProcessConfig) {
	s, hs := shareStore(t, cfg, 5)
	opened := openPast(t, s)
	time.Sleep(cfg.Propagation) // the helpers' copies (of no record) are dropped
	for round := 1; round <= 3; round++ {
		for _, h := range hs {
			h.send(fmt.Sprintf("run %d close_after=3", time.Minute))
		}
		var ran []*helper
		for _, h := range hs {
			switch msg := h.recv(); msg {
			case "ran":
				ran = append(ran, h)
			case "open half_open":
			default:
				t.Fatalf("round %d: helper process %d said %q%s", round, h.pid(), msg, h.output())
			}
		}
		if len(ran) != 1 {
			t.Fatalf("round %d: %d probes ran at once, want 1", round, len(ran))
		}
		finish(t, ran)
		rec, _ := loadShared(t, s)
		if round < 3 && (rec.State != circuit.StateHalfOpen || rec.Successes != round || rec.ProbeToken != "") {
			t.Fatalf("after %d probe successes of 3: %+v, want half_open with no probe in flight", round, rec)
		}
	}
	wantClosed(t, s, opened.Generation+1)
}

func testGrowingCooldown(t *testing.T, cfg ProcessConfig) {
	s, hs := shareStore(t, cfg, 4)
	const spec = "cooldown=1s max_cooldown=2s"
	openPast(t, s)
	time.Sleep(cfg.Propagation) // the helpers' copies (of no record) are dropped
	// Each round, one helper's probe fails; every helper is then rejected
	// until the same deadline, a cooldown doubled up to MaxCooldown after
	// the failure. The last round's probe succeeds and the next opening is
	// back to Cooldown.
	for round, want := range []time.Duration{2 * time.Second, 2 * time.Second, 0, time.Second} {
		prober := hs[round%len(hs)]
		o := "failure"
		if want == 0 {
			o = "success"
		}
		if got := call(prober, o, spec); got != "ok" {
			t.Fatalf("round %d: the probe = %q", round, got)
		}
		rec, _ := loadShared(t, s)
		if want == 0 {
			if rec.State != circuit.StateClosed || rec.Reopens != 0 {
				t.Fatalf("after the probe's success: %+v, want closed", rec)
			}
			continue
		}
		if got := rec.OpenUntil.Sub(rec.UpdatedAt); rec.State != circuit.StateOpen || got != want {
			t.Fatalf("round %d: open for %v (%+v), want %v", round, got, rec, want)
		}
		for _, h := range hs {
			if got, w := call(h, "success", spec), fmt.Sprintf("open open %d", rec.OpenUntil.UnixNano()); got != w {
				t.Fatalf("round %d: helper process %d said %q, want %q", round, h.pid(), got, w)
			}
		}
		_, now := loadShared(t, s)
		time.Sleep(rec.OpenUntil.Sub(now) + 10*time.Millisecond)
	}
}
