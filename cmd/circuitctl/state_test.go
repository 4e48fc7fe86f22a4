package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/storeurl"
)

// behind opens the store at storeURL in the test process with a Breaker
// whose clock runs ago behind the store's: what it writes is dated ago in
// the past, as if written then.
func behind(t *testing.T, storeURL string, ago time.Duration) *circuit.Breaker {
	t.Helper()
	st, err := storeurl.Open(context.Background(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock, ok := st.(interface{ Now() time.Time })
	if !ok {
		t.Fatalf("the store at %s has no clock", storeURL)
	}
	return circuit.New(st, circuit.WithClock(func() time.Time { return clock.Now().Add(-ago) }))
}

// TestStateReadsTime shows that state reports the state by the store's
// clock, before any call arrives: an open circuit whose cooldown ended, and
// a forced open whose window ended, are half-open, ready to probe; a probe
// that holds its claim is in flight.
func TestStateReadsTime(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			storeURL, _, _ := be.setup(t)
			past := behind(t, storeURL, 11*time.Minute)
			fail := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, nil }
			for range 3 {
				_ = past.Run(context.Background(), "search", policy, fail) // open until a minute ago
			}
			if err := past.ForceOpen(context.Background(), "refunds", 10*time.Minute); err != nil { // forced until a minute ago
				t.Fatal(err)
			}
			for range 3 {
				_ = past.Run(context.Background(), "email", policy, fail)
			}
			if _, err := breakerOn(t, storeURL).Allow(context.Background(), "email", policy); err != nil { // the probe, in flight
				t.Fatal(err)
			}

			r := circuitctl(t, nil, "state", "-store", storeURL, "email", "payments", "refunds", "search")
			for _, want := range []*regexp.Regexp{
				regexp.MustCompile(`(?m)^email +half_open \(probe in flight\) +3 +1 +\S+ \(1m\d+s ago\) +\S+ \(in (1m0s|\d+s)\) `),
				regexp.MustCompile(`(?m)^payments +open +3 +1 +\S+ \(in (10m0s|9m\d+s)\) `),
				regexp.MustCompile(`(?m)^refunds +half_open \(ready to probe\) +0 +1 +\S+ \(1m\d+s ago\) +- `),
				regexp.MustCompile(`(?m)^search +half_open \(ready to probe\) +3 +1 +\S+ \(1m\d+s ago\) +- `),
			} {
				if !want.MatchString(r.stdout) {
					t.Errorf("state: exit %d, want a line matching %s:\n%s%s", r.code, want, r.stdout, r.stderr)
				}
			}
			r = circuitctl(t, nil, "state", "-json", "-store", storeURL, "email", "refunds", "search")
			var rep stateReport
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Circuits) != 3 {
				t.Fatalf("state -json: %v\n%s", err, r.stdout)
			}
			for _, c := range rep.Circuits {
				if c.State.String() != "half_open" || c.Probing != (c.Name == "email") || c.Forced {
					t.Errorf("state -json: %+v, want half_open, probing only for email, none forced", c)
				}
			}
			// Reading changed nothing: the next call to search is the probe.
			if tk, err := breakerOn(t, storeURL).Allow(context.Background(), "search", policy); err != nil || !tk.Probe() {
				t.Errorf("the call after state = %v, %v; want the probe", tk, err)
			}
		})
	}
}

// TestNeverSeen shows that a name the store has no record of is reported
// as never seen, and that open refuses it unless asked to create it.
func TestNeverSeen(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			storeURL, _, _ := be.setup(t)
			b := breakerOn(t, storeURL)
			r := circuitctl(t, nil, "state", "-store", storeURL, "nosuch:circuit", "payments")
			if r.code != 0 || !regexp.MustCompile(`(?m)^nosuch:circuit +never seen +0 +- +- +- +-$`).MatchString(r.stdout) {
				t.Errorf("state of a name never seen: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = circuitctl(t, nil, "open", "-store", storeURL, "-for", "90s", "-yes", "nosuch:circuit")
			if r.code != 1 || !strings.Contains(r.stderr, "circuit nosuch:circuit has never been seen in ") || !strings.Contains(r.stderr, "pass -new") {
				t.Errorf("open of a name never seen: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if snap, err := b.Snapshot(context.Background(), "nosuch:circuit"); err != nil || snap.Exists {
				t.Fatalf("the refused open made a record: %+v %v", snap, err)
			}
			r = circuitctl(t, nil, "clear", "-store", storeURL, "-yes", "nosuch:circuit")
			if r.code != 1 || !strings.Contains(r.stderr, "never been seen") {
				t.Errorf("clear of a name never seen: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = circuitctl(t, nil, "open", "-store", storeURL, "-for", "90s", "-new", "-yes", "nosuch:circuit")
			if r.code != 0 || !strings.Contains(r.stdout, "forced circuit nosuch:circuit open in ") {
				t.Errorf("open -new: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			// A store with copies (its copy of no record included) sees
			// another process's write once the invalidation arrives.
			var snap circuit.Snapshot
			var err error
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				snap, err = b.Snapshot(context.Background(), "nosuch:circuit")
				if err != nil || snap.Forced || time.Now().After(deadline) {
					break
				}
			}
			if err != nil || !snap.Forced {
				t.Errorf("after open -new: %+v %v, want forced open", snap, err)
			}
		})
	}
}
