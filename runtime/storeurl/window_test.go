//go:build linux || darwin

package storeurl_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/storeurl"
)

// envWindowURL is the store URL of TestOpenSharesWindow's second process.
const envWindowURL = "CIRCUITGEN_TEST_WINDOW_URL"

// windowPolicy opens at 50% failures of at least 8 calls in a minute.
var windowPolicy = circuit.Policy{FailureRate: 0.5, MinCalls: 8, Window: time.Minute, Cooldown: time.Minute, ProbeLease: time.Second}

// TestOpenSharesWindow opens one store through Open in two processes
// under a failure-rate rule (50% of at least 8 calls). The second process
// makes 5 calls, 3 of them failed, the last one after driver.FlushEvery
// (so that a store that flushes window counts in batches has sent them
// all); then this one makes 4, 2 of them failed. Neither alone reaches
// MinCalls; counted in one window, as the file store (in memory its
// processes share) and Redis (on the server) count them, they open the
// circuit: the next call is rejected.
func TestOpenSharesWindow(t *testing.T) {
	if raw := os.Getenv(envWindowURL); raw != "" { // the second process
		b := rateCalls(t, raw, circuit.Success, circuit.Failure, circuit.Success, circuit.Failure)
		time.Sleep(driver.FlushEvery)
		if err := b.Run(t.Context(), "billing-api", windowPolicy, outcome(circuit.Failure)); err != nil {
			t.Fatal(err)
		}
		return
	}
	tests := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"file", func(t *testing.T) string { return "file://" + t.TempDir() }},
		{"redis", func(t *testing.T) string { _, _, raw := startRedis(t); return raw }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.url(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestOpenSharesWindow$", "-test.count=1")
			cmd.Env = append(os.Environ(), envWindowURL+"="+raw)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("second process: %v\n%s", err, out)
			}
			b := rateCalls(t, raw, circuit.Success, circuit.Failure, circuit.Success, circuit.Failure)
			err := b.Run(t.Context(), "billing-api", windowPolicy, succeed)
			if open := (*circuit.OpenError)(nil); !errors.As(err, &open) {
				t.Fatalf("after 5 failures in 9 calls from two processes, Run = %v; want a *circuit.OpenError: each process counted its own calls", err)
			}
		})
	}
}

// rateCalls opens the store raw names and makes calls with the given
// outcomes through a Breaker over it, each of which must run; it returns
// the Breaker.
func rateCalls(t *testing.T, raw string, outcomes ...circuit.Outcome) *circuit.Breaker {
	t.Helper()
	s, err := storeurl.Open(t.Context(), raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b := circuit.New(s)
	for _, o := range outcomes {
		if err := b.Run(t.Context(), "billing-api", windowPolicy, outcome(o)); err != nil {
			t.Fatalf("call with outcome %v: %v", o, err)
		}
	}
	return b
}

// outcome returns an operation that returns o.
func outcome(o circuit.Outcome) func(context.Context) (circuit.Outcome, error) {
	return func(context.Context) (circuit.Outcome, error) { return o, nil }
}
