package main

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

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
			if c := rep.Circuits[0]; !c.Forced || c.State != "open" || c.OpenUntil.IsZero() {
				t.Errorf("state -json of the forced circuit: %+v", c)
			}
			if c := rep.Circuits[1]; c.Forced || c.State != "open" {
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

func TestOpenErrors(t *testing.T) {
	storeURL, _, _ := setupFile(t)
	for _, tt := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no duration", []string{"open", "-store", storeURL, "-yes", "payments"}, "-for 0s: must be within 1s..24h0m0s"},
		{"too long", []string{"open", "-store", storeURL, "-yes", "-for", "25h", "payments"}, "must be within"},
		{"no name", []string{"open", "-store", storeURL, "-for", "1h"}, "usage: circuitctl open"},
		{"invalid name", []string{"open", "-store", storeURL, "-for", "1h", "https://billing"}, "invalid name"},
		{"no store", []string{"open", "-for", "1h", "payments"}, "no store"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := circuitctl(t, nil, tt.args...); r.code != 2 || !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tt.wantErr)
			}
		})
	}
}

// TestOpenAsksOnTerminal runs open on a pseudo-terminal (util-linux's
// script) and answers its question.
func TestOpenAsksOnTerminal(t *testing.T) {
	storeURL, _, _ := setupFile(t)
	b := breakerOn(t, storeURL)
	for _, tt := range []struct {
		answer   string
		wantCode int
		wantOut  string
		forced   bool
	}{
		{"\n", 1, "circuit billing-api not opened", false},
		{"no\n", 1, "not opened", false},
		{"yes\n", 0, "forced circuit billing-api open", true},
	} {
		code, out := answer(t, "open -store '"+storeURL+"' -for 10m billing-api", tt.answer)
		if code != tt.wantCode || !strings.Contains(out, "force circuit billing-api open in "+storeURL+" for 10m0s? [y/N]") || !strings.Contains(out, tt.wantOut) {
			t.Fatalf("answer %q: exit %d, output:\n%s", tt.answer, code, out)
		}
		if snap, err := b.Snapshot(context.Background(), "billing-api"); err != nil || snap.Forced != tt.forced {
			t.Fatalf("answer %q: forced %v (%v), want %v", tt.answer, snap.Forced, err, tt.forced)
		}
	}
}
