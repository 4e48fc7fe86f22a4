package prommetrics_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/circuitgen/circuitgen/runtime/prommetrics"
)

var policy = circuit.Policy{FailureThreshold: 3, Cooldown: time.Minute, ProbeLease: time.Minute}

var errDown = errors.New("dependency down")

// clock is a test clock that runs with real time plus an offset.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) advance(d time.Duration) { c.offset.Add(int64(d)) }
func newStore(t *testing.T) (*filestore.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func run(t *testing.T, b *circuit.Breaker, name string, o circuit.Outcome, n int) {
	t.Helper()
	for range n {
		err := b.Run(context.Background(), name, policy, func(context.Context) (circuit.Outcome, error) {
			if o == circuit.Failure {
				return o, errDown
			}
			return o, nil
		})
		if err != nil && !errors.Is(err, errDown) {
			t.Fatalf("call to %s: %v", name, err)
		}
	}
}

func TestTransitions(t *testing.T) {
	store, _ := newStore(t)
	tr := prommetrics.NewTransitions()
	tr.Init("idle")
	var clk clock
	b := circuit.New(store, circuit.WithObserver(tr), circuit.WithClock(clk.now))
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tr)

	run(t, b, "billing-api", circuit.Failure, 3) // closed → open
	clk.advance(2 * time.Minute)
	run(t, b, "billing-api", circuit.Success, 1) // open → half_open → closed
	run(t, b, "billing-api", circuit.Failure, 3) // closed → open
	clk.advance(2 * time.Minute)
	run(t, b, "billing-api", circuit.Failure, 1) // open → half_open → open
	run(t, b, "search", circuit.Failure, 2)      // no transition

	want := `
# HELP circuitgen_transitions_total State transitions of circuits committed by this process.
# TYPE circuitgen_transitions_total counter
circuitgen_transitions_total{circuit="billing-api",from="closed",to="open"} 2
circuitgen_transitions_total{circuit="billing-api",from="half_open",to="closed"} 1
circuitgen_transitions_total{circuit="billing-api",from="half_open",to="open"} 1
circuitgen_transitions_total{circuit="billing-api",from="open",to="half_open"} 2
circuitgen_transitions_total{circuit="idle",from="closed",to="open"} 0
circuitgen_transitions_total{circuit="idle",from="half_open",to="closed"} 0
circuitgen_transitions_total{circuit="idle",from="half_open",to="open"} 0
circuitgen_transitions_total{circuit="idle",from="open",to="half_open"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "circuitgen_transitions_total"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func TestStateCollector(t *testing.T) {
	store, dir := newStore(t)
	var clk clock
	b := circuit.New(store, circuit.WithClock(clk.now))
	run(t, b, "billing-api", circuit.Failure, 2)     // closed, 2 failures
	run(t, b, "payment-gateway", circuit.Failure, 3) // open
	run(t, b, "email-svc", circuit.Failure, 3)
	clk.advance(2 * time.Minute)
	if _, err := b.Allow(context.Background(), "email-svc", policy); err != nil { // half_open: a probe in flight
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, circuit.Key("ledger")+".json"), []byte(`{"v":1`), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		collector prometheus.Collector
		want      string
	}{
		{
			name:      "named circuits",
			collector: prommetrics.NewStateCollector(b, "payment-gateway", "billing-api", "email-svc", "ledger", "search", "billing-api"),
			want: `
# HELP circuitgen_circuit_failures Consecutive failures recorded for the circuit.
# TYPE circuitgen_circuit_failures gauge
circuitgen_circuit_failures{circuit="billing-api"} 2
circuitgen_circuit_failures{circuit="email-svc"} 3
circuitgen_circuit_failures{circuit="payment-gateway"} 3
circuitgen_circuit_failures{circuit="search"} 0
# HELP circuitgen_circuit_state Stored state of the circuit: 1 for its state, 0 for the others.
# TYPE circuitgen_circuit_state gauge
circuitgen_circuit_state{circuit="billing-api",state="closed"} 1
circuitgen_circuit_state{circuit="billing-api",state="half_open"} 0
circuitgen_circuit_state{circuit="billing-api",state="open"} 0
circuitgen_circuit_state{circuit="email-svc",state="closed"} 0
circuitgen_circuit_state{circuit="email-svc",state="half_open"} 1
circuitgen_circuit_state{circuit="email-svc",state="open"} 0
circuitgen_circuit_state{circuit="payment-gateway",state="closed"} 0
circuitgen_circuit_state{circuit="payment-gateway",state="half_open"} 1
circuitgen_circuit_state{circuit="payment-gateway",state="open"} 0
circuitgen_circuit_state{circuit="search",state="closed"} 1
circuitgen_circuit_state{circuit="search",state="half_open"} 0
circuitgen_circuit_state{circuit="search",state="open"} 0
# HELP circuitgen_circuit_state_error 1 when the circuit's state cannot be read (a corrupt or unreadable record), 0 otherwise.
# TYPE circuitgen_circuit_state_error gauge
circuitgen_circuit_state_error{circuit="billing-api"} 0
circuitgen_circuit_state_error{circuit="email-svc"} 0
circuitgen_circuit_state_error{circuit="ledger"} 1
circuitgen_circuit_state_error{circuit="payment-gateway"} 0
circuitgen_circuit_state_error{circuit="search"} 0
`,
		},
		{
			name: "listed circuits",
			collector: prommetrics.NewStateCollectorFunc(b, func(context.Context) ([]string, error) {
				return []string{"billing-api"}, nil
			}),
			want: `
# HELP circuitgen_circuit_failures Consecutive failures recorded for the circuit.
# TYPE circuitgen_circuit_failures gauge
circuitgen_circuit_failures{circuit="billing-api"} 2
# HELP circuitgen_circuit_state Stored state of the circuit: 1 for its state, 0 for the others.
# TYPE circuitgen_circuit_state gauge
circuitgen_circuit_state{circuit="billing-api",state="closed"} 1
circuitgen_circuit_state{circuit="billing-api",state="half_open"} 0
circuitgen_circuit_state{circuit="billing-api",state="open"} 0
# HELP circuitgen_circuit_state_error 1 when the circuit's state cannot be read (a corrupt or unreadable record), 0 otherwise.
# TYPE circuitgen_circuit_state_error gauge
circuitgen_circuit_state_error{circuit="billing-api"} 0
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(tt.collector)
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tt.want)); err != nil {
				t.Error(err)
			}
			if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", problems, err)
			}
		})
	}

	// The open circuit's cooldown is over: it reads half-open, ready to
	// probe. Scraping never changes a circuit: no probe was claimed, and
	// the next call is the probe.
	snap, err := b.Snapshot(context.Background(), "payment-gateway")
	if err != nil || snap.State != circuit.StateHalfOpen || snap.Probing {
		t.Errorf("after scraping, payment-gateway is %+v (%v), want half-open, ready to probe", snap, err)
	}
	if tk, err := b.Allow(context.Background(), "payment-gateway", policy); err != nil || !tk.Probe() {
		t.Errorf("the call after scraping = %v, %v; want the probe", tk, err)
	}
}

func TestStateCollectorListError(t *testing.T) {
	store, dir := newStore(t)
	b := circuit.New(store)
	run(t, b, "billing-api", circuit.Failure, 1)
	if err := os.WriteFile(filepath.Join(dir, circuit.Key("ledger")+".json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prommetrics.NewStateCollectorFunc(b, store.Names))
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "list circuits") {
		t.Errorf("Gather error = %v, want a listing error", err)
	}
}
