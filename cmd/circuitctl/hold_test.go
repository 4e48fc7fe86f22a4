package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/storeurl"
)

// breakerOn opens the store at storeURL in the test process, as an
// application sharing it would, and returns a Breaker over it.
func breakerOn(t *testing.T, storeURL string) *circuit.Breaker {
	t.Helper()
	st, err := storeurl.Open(context.Background(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return circuit.New(st)
}

func TestOpenAndClear(t *testing.T) {
	t.Parallel()
	succeed := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			storeURL, record, _ := be.setup(t)
			b := breakerOn(t, storeURL)

			if r := circuitctl(t, nil, "open", "-store", storeURL, "-for", "1h", "billing-api"); r.code != 1 || !strings.Contains(r.stderr, "pass -yes to open circuit billing-api") {
				t.Fatalf("open without -yes: exit %d\n%s", r.code, r.stderr)
			}
			if err := b.Run(context.Background(), "billing-api", policy, succeed); err != nil {
				t.Fatalf("after a refused open, a call = %v", err)
			}

			r := circuitctl(t, nil, "open", "-store", storeURL, "-for", "1h", "-yes", "billing-api")
			if r.code != 0 || !strings.Contains(r.stdout, "forced circuit billing-api open in ") || !strings.Contains(r.stdout, " until ") {
				t.Fatalf("open -yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			// Another process sharing the store does not call it.
			ran := false
			err := b.Run(context.Background(), "billing-api", policy, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
			oe, ok := errors.AsType[*circuit.OpenError](err)
			if ran || !ok || !oe.Forced || oe.RetryAfterSeconds() < 3590 {
				t.Fatalf("a call to the forced circuit: ran %v, error %v", ran, err)
			}

			// state says so, and for how long.
			r = circuitctl(t, nil, "state", "-store", storeURL, "billing-api")
			if r.code != 0 || !regexp.MustCompile(`billing-api  open \(forced\)  0 .* \(in (1h0m0s|59m5\ds)\)`).MatchString(r.stdout) {
				t.Fatalf("state of the forced circuit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = circuitctl(t, nil, "state", "-store", storeURL, "-json", "billing-api", "payments")
			var rep stateReport
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Circuits) != 2 {
				t.Fatalf("state -json: %v\n%s", err, r.stdout)
			}
			if c := rep.Circuits[0]; !c.Forced || c.State.String() != "open" || c.OpenUntil.IsZero() {
				t.Errorf("state -json of the forced circuit: %+v", c)
			}
			if c := rep.Circuits[1]; c.Forced || c.State.String() != "open" {
				t.Errorf("state -json of a circuit that opened by itself: %+v", c)
			}

			// A corrupt record is not overwritten: clear it first.
			if r = circuitctl(t, nil, "open", "-store", storeURL, "-for", "1h", "-yes", "ledger"); r.code != 1 || !strings.Contains(r.stderr, record) || !strings.Contains(r.stderr, "circuitctl clear removes") {
				t.Fatalf("open of a corrupt record: exit %d\n%s", r.code, r.stderr)
			}

			// clear ends it.
			if r = circuitctl(t, nil, "clear", "-store", storeURL, "-yes", "billing-api"); r.code != 0 {
				t.Fatalf("clear: exit %d\n%s", r.code, r.stderr)
			}
			if err := b.Run(context.Background(), "billing-api", policy, succeed); err != nil {
				t.Fatalf("after clear, a call = %v", err)
			}
		})
	}
}

func TestHoldErrors(t *testing.T) {
	t.Parallel()
	storeURL, _, _ := setupFile(t)
	for _, verb := range []string{"open", "close"} {
		for _, tt := range []struct {
			name    string
			args    []string
			wantErr string
		}{
			{"no duration", []string{"-store", storeURL, "-yes", "payments"}, "-for 0s: must be within 1s..24h0m0s"},
			{"too long", []string{"-store", storeURL, "-yes", "-for", "25h", "payments"}, "must be within"},
			{"no name", []string{"-store", storeURL, "-for", "1h"}, "usage: circuitctl " + verb},
			{"invalid name", []string{"-store", storeURL, "-for", "1h", "https://billing"}, "invalid name"},
			{"no store", []string{"-for", "1h", "payments"}, "no store"},
		} {
			t.Run(verb+" "+tt.name, func(t *testing.T) {
				if r := circuitctl(t, nil, append([]string{verb}, tt.args...)...); r.code != 2 || !strings.Contains(r.stderr, tt.wantErr) {
					t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tt.wantErr)
				}
			})
		}
	}
}

// TestHoldAsksOnTerminal runs open and close on a pseudo-terminal
// (util-linux's script) and answers their question.
func TestHoldAsksOnTerminal(t *testing.T) {
	t.Parallel()
	for _, h := range []struct{ verb, state, done string }{{"open", "open", "opened"}, {"close", "closed", "closed"}} {
		t.Run(h.verb, func(t *testing.T) {
			storeURL, _, _ := setupFile(t)
			b := breakerOn(t, storeURL)
			for _, tt := range []struct {
				answer   string
				wantCode int
				wantOut  string
				forced   bool
			}{
				{"\n", 1, "circuit billing-api not " + h.done, false},
				{"no\n", 1, "not " + h.done, false},
				{"yes\n", 0, "forced circuit billing-api " + h.state, true},
			} {
				code, out := answer(t, h.verb+" -store '"+storeURL+"' -for 10m billing-api", tt.answer)
				if code != tt.wantCode || !strings.Contains(out, "force circuit billing-api "+h.state+" in "+storeURL+" for 10m0s? [y/N]") || !strings.Contains(out, tt.wantOut) {
					t.Fatalf("answer %q: exit %d, output:\n%s", tt.answer, code, out)
				}
				snap, err := b.Snapshot(context.Background(), "billing-api")
				if err != nil || snap.Forced != tt.forced || tt.forced && snap.State.String() != h.state {
					t.Fatalf("answer %q: %+v (%v), want forced %v", tt.answer, snap, err, tt.forced)
				}
			}
		})
	}
}

// within fails the test unless f returns nil within a second, trying
// every 10 ms; what says what f checks.
func within(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %v after a second", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCloseAndClear(t *testing.T) {
	t.Parallel()
	failure := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, nil }
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			storeURL, record, _ := be.setup(t)
			b := breakerOn(t, storeURL)

			if r := circuitctl(t, nil, "close", "-store", storeURL, "-for", "1h", "payments"); r.code != 1 || !strings.Contains(r.stderr, "pass -yes to close circuit payments") {
				t.Fatalf("close without -yes: exit %d\n%s", r.code, r.stderr)
			}
			if err := b.Run(context.Background(), "payments", policy, failure); !errors.Is(err, circuit.ErrOpen) {
				t.Fatalf("after a refused close, a call to the open circuit = %v, want rejected", err)
			}

			r := circuitctl(t, nil, "close", "-store", storeURL, "-for", "1h", "-yes", "payments")
			if r.code != 0 || !strings.Contains(r.stdout, "forced circuit payments closed in ") || !strings.Contains(r.stdout, " until ") {
				t.Fatalf("close -yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			// Another process sharing the store calls it, and its failures
			// count nothing.
			for range 2 * policy.FailureThreshold {
				if err := b.Run(context.Background(), "payments", policy, failure); err != nil {
					t.Fatalf("a failing call to the circuit held closed = %v, want it run", err)
				}
			}

			r = circuitctl(t, nil, "state", "-store", storeURL, "payments")
			if r.code != 0 || !regexp.MustCompile(`payments  closed \(forced\)  0 .* \(in (1h0m0s|59m5\ds)\)`).MatchString(r.stdout) {
				t.Fatalf("state of the circuit held closed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = circuitctl(t, nil, "state", "-store", storeURL, "-json", "payments")
			var rep stateReport
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Circuits) != 1 {
				t.Fatalf("state -json: %v\n%s", err, r.stdout)
			}
			if c := rep.Circuits[0]; !c.Forced || c.State.String() != "closed" || c.OpenUntil.IsZero() || c.Failures != 0 {
				t.Errorf("state -json of the circuit held closed: %+v", c)
			}

			// open replaces the hold, and close replaces it back. A store
			// with copies tells the test's Breaker of another process's
			// change once its invalidation arrives.
			if r = circuitctl(t, nil, "open", "-store", storeURL, "-for", "1h", "-yes", "payments"); r.code != 0 {
				t.Fatalf("open over close: exit %d\n%s", r.code, r.stderr)
			}
			within(t, "a call after open over close is rejected", func() error {
				if err := b.Run(context.Background(), "payments", policy, failure); !errors.Is(err, circuit.ErrOpen) {
					return fmt.Errorf("a call = %v", err)
				}
				return nil
			})
			if r = circuitctl(t, nil, "close", "-store", storeURL, "-for", "1h", "-yes", "payments"); r.code != 0 {
				t.Fatalf("close over open: exit %d\n%s", r.code, r.stderr)
			}
			within(t, "a call after close over open runs", func() error {
				return b.Run(context.Background(), "payments", policy, failure)
			})

			// A corrupt record is not overwritten: clear it first.
			if r = circuitctl(t, nil, "close", "-store", storeURL, "-for", "1h", "-yes", "ledger"); r.code != 1 || !strings.Contains(r.stderr, record) || !strings.Contains(r.stderr, "circuitctl clear removes") {
				t.Fatalf("close of a corrupt record: exit %d\n%s", r.code, r.stderr)
			}

			// clear ends it: the failures count again.
			if r = circuitctl(t, nil, "clear", "-store", storeURL, "-yes", "payments"); r.code != 0 {
				t.Fatalf("clear: exit %d\n%s", r.code, r.stderr)
			}
			within(t, "after clear, failures open the circuit", func() error {
				if err := b.Run(context.Background(), "payments", policy, failure); !errors.Is(err, circuit.ErrOpen) {
					return fmt.Errorf("a call = %v", err)
				}
				return nil
			})
		})
	}
}
