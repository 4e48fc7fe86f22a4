package prommetrics_test

import (
	"context"
	"errors"
	"math"
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

// timed makes a call to name with outcome o that takes took on clk.
func timed(t *testing.T, b *circuit.Breaker, clk *clock, name string, o circuit.Outcome, took time.Duration) {
	t.Helper()
	err := b.Run(context.Background(), name, policy, func(context.Context) (circuit.Outcome, error) {
		clk.advance(took)
		if o == circuit.Failure {
			return o, errDown
		}
		return o, nil
	})
	if err != nil && !errors.Is(err, errDown) {
		t.Fatalf("call to %s: %v", name, err)
	}
}

// rejected makes a call to name and checks that it is rejected.
func rejected(t *testing.T, b *circuit.Breaker, name string) {
	t.Helper()
	err := b.Run(context.Background(), name, policy, func(context.Context) (circuit.Outcome, error) {
		t.Fatalf("a call to %s ran", name)
		return circuit.Success, nil
	})
	if !errors.Is(err, circuit.ErrOpen) {
		t.Fatalf("call to %s: %v, want it rejected", name, err)
	}
}

func TestObserver(t *testing.T) {
	store, _ := newStore(t)
	obs := prommetrics.NewObserver()
	obs.Init("idle")
	var clk clock
	b := circuit.New(store, circuit.WithObserver(obs), circuit.WithClock(clk.now))
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(obs)

	for range 3 {
		timed(t, b, &clk, "billing-api", circuit.Failure, 2*time.Second) // closed → open
	}
	rejected(t, b, "billing-api")
	rejected(t, b, "billing-api")
	clk.advance(2 * time.Minute)
	timed(t, b, &clk, "billing-api", circuit.Success, 20*time.Millisecond) // open → half_open → closed
	timed(t, b, &clk, "billing-api", circuit.Ignored, 0)
	run(t, b, "billing-api", circuit.Failure, 3) // closed → open
	clk.advance(2 * time.Minute)
	run(t, b, "billing-api", circuit.Failure, 1) // open → half_open → open
	if err := b.ForceOpen(context.Background(), "ledger", time.Hour); err != nil {
		t.Fatal(err)
	}
	rejected(t, b, "ledger")
	run(t, b, "email-svc", circuit.Failure, 3)
	clk.advance(2 * time.Minute)
	if _, err := b.Allow(context.Background(), "email-svc", policy); err != nil { // the probe, in flight
		t.Fatal(err)
	}
	rejected(t, b, "email-svc")
	observing := circuit.New(store, circuit.WithObserver(obs), circuit.WithClock(clk.now), circuit.WithObserveOnly())
	for range 2 { // forced open: observe-only runs them
		if err := observing.Run(context.Background(), "ledger", policy, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
			t.Fatalf("an observe-only call = %v", err)
		}
	}

	want := `
# HELP circuitgen_circuit_calls_total Calls admitted through a circuit and completed, by outcome (success, failure, ignored), in this process.
# TYPE circuitgen_circuit_calls_total counter
circuitgen_circuit_calls_total{circuit="billing-api",outcome="failure"} 7
circuitgen_circuit_calls_total{circuit="billing-api",outcome="ignored"} 1
circuitgen_circuit_calls_total{circuit="billing-api",outcome="success"} 1
circuitgen_circuit_calls_total{circuit="email-svc",outcome="failure"} 3
circuitgen_circuit_calls_total{circuit="email-svc",outcome="ignored"} 0
circuitgen_circuit_calls_total{circuit="email-svc",outcome="success"} 0
circuitgen_circuit_calls_total{circuit="idle",outcome="failure"} 0
circuitgen_circuit_calls_total{circuit="idle",outcome="ignored"} 0
circuitgen_circuit_calls_total{circuit="idle",outcome="success"} 0
circuitgen_circuit_calls_total{circuit="ledger",outcome="failure"} 0
circuitgen_circuit_calls_total{circuit="ledger",outcome="ignored"} 0
circuitgen_circuit_calls_total{circuit="ledger",outcome="success"} 0
# HELP circuitgen_circuit_observed_rejections_total Calls an observe-only circuit would have rejected and ran instead, by its state (open, half_open) and whether an operator forced it open, in this process.
# TYPE circuitgen_circuit_observed_rejections_total counter
circuitgen_circuit_observed_rejections_total{circuit="billing-api",forced="false",state="half_open"} 0
circuitgen_circuit_observed_rejections_total{circuit="billing-api",forced="false",state="open"} 0
circuitgen_circuit_observed_rejections_total{circuit="billing-api",forced="true",state="open"} 0
circuitgen_circuit_observed_rejections_total{circuit="email-svc",forced="false",state="half_open"} 0
circuitgen_circuit_observed_rejections_total{circuit="email-svc",forced="false",state="open"} 0
circuitgen_circuit_observed_rejections_total{circuit="email-svc",forced="true",state="open"} 0
circuitgen_circuit_observed_rejections_total{circuit="idle",forced="false",state="half_open"} 0
circuitgen_circuit_observed_rejections_total{circuit="idle",forced="false",state="open"} 0
circuitgen_circuit_observed_rejections_total{circuit="idle",forced="true",state="open"} 0
circuitgen_circuit_observed_rejections_total{circuit="ledger",forced="false",state="half_open"} 0
circuitgen_circuit_observed_rejections_total{circuit="ledger",forced="false",state="open"} 0
circuitgen_circuit_observed_rejections_total{circuit="ledger",forced="true",state="open"} 2
# HELP circuitgen_circuit_rejections_total Calls a circuit rejected without running them, by its state (open, half_open) and whether an operator forced it open, in this process.
# TYPE circuitgen_circuit_rejections_total counter
circuitgen_circuit_rejections_total{circuit="billing-api",forced="false",state="half_open"} 0
circuitgen_circuit_rejections_total{circuit="billing-api",forced="false",state="open"} 2
circuitgen_circuit_rejections_total{circuit="billing-api",forced="true",state="open"} 0
circuitgen_circuit_rejections_total{circuit="email-svc",forced="false",state="half_open"} 1
circuitgen_circuit_rejections_total{circuit="email-svc",forced="false",state="open"} 0
circuitgen_circuit_rejections_total{circuit="email-svc",forced="true",state="open"} 0
circuitgen_circuit_rejections_total{circuit="idle",forced="false",state="half_open"} 0
circuitgen_circuit_rejections_total{circuit="idle",forced="false",state="open"} 0
circuitgen_circuit_rejections_total{circuit="idle",forced="true",state="open"} 0
circuitgen_circuit_rejections_total{circuit="ledger",forced="false",state="half_open"} 0
circuitgen_circuit_rejections_total{circuit="ledger",forced="false",state="open"} 0
circuitgen_circuit_rejections_total{circuit="ledger",forced="true",state="open"} 1
# HELP circuitgen_circuit_transitions_total State transitions of circuits committed by this process.
# TYPE circuitgen_circuit_transitions_total counter
circuitgen_circuit_transitions_total{circuit="billing-api",from="closed",to="open"} 2
circuitgen_circuit_transitions_total{circuit="billing-api",from="half_open",to="closed"} 1
circuitgen_circuit_transitions_total{circuit="billing-api",from="half_open",to="open"} 1
circuitgen_circuit_transitions_total{circuit="billing-api",from="open",to="half_open"} 2
circuitgen_circuit_transitions_total{circuit="email-svc",from="closed",to="open"} 1
circuitgen_circuit_transitions_total{circuit="email-svc",from="open",to="half_open"} 1
circuitgen_circuit_transitions_total{circuit="idle",from="closed",to="open"} 0
circuitgen_circuit_transitions_total{circuit="idle",from="half_open",to="closed"} 0
circuitgen_circuit_transitions_total{circuit="idle",from="half_open",to="open"} 0
circuitgen_circuit_transitions_total{circuit="idle",from="open",to="half_open"} 0
circuitgen_circuit_transitions_total{circuit="ledger",from="closed",to="open"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"circuitgen_circuit_calls_total", "circuitgen_circuit_rejections_total", "circuitgen_circuit_observed_rejections_total", "circuitgen_circuit_transitions_total"); err != nil {
		t.Error(err)
	}

	// The histogram: each call's duration on the Breaker's clock, which runs
	// with real time (hence the tolerance) plus what the calls added.
	type hist struct {
		count   uint64
		sum     float64
		under1s uint64 // the count of the bucket le="1"
	}
	hists := map[string]hist{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "circuitgen_circuit_call_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetValue())
			}
			h := hist{count: m.GetHistogram().GetSampleCount(), sum: m.GetHistogram().GetSampleSum()}
			for _, b := range m.GetHistogram().GetBucket() {
				if b.GetUpperBound() == 1 {
					h.under1s = b.GetCumulativeCount()
				}
			}
			hists[strings.Join(labels, " ")] = h
		}
	}
	for key, w := range map[string]hist{
		"billing-api failure": {count: 7, sum: 6, under1s: 4},
		"billing-api success": {count: 1, sum: 0.02, under1s: 1},
		"billing-api ignored": {count: 1, under1s: 1},
		"idle success":        {},
	} {
		if h := hists[key]; h.count != w.count || h.under1s != w.under1s || math.Abs(h.sum-w.sum) > 0.01 {
			t.Errorf("call duration of %s = %+v, want %+v", key, h, w)
		}
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
# HELP circuitgen_circuit_state State of the circuit by the store's clock (half_open once an open circuit's cooldown is over): 1 for its state, 0 for the others.
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
# HELP circuitgen_circuit_state State of the circuit by the store's clock (half_open once an open circuit's cooldown is over): 1 for its state, 0 for the others.
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
