package otelcircuit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/circuitgen/circuitgen/runtime/otelcircuit"
)

var policy = circuit.Policy{FailureThreshold: 3, Cooldown: time.Minute, ProbeLease: time.Minute}

var errDown = errors.New("dependency down")

// newBreaker returns a Breaker over a file store in a new directory, with a
// clock that stands still until the test moves it, and the directory.
func newBreaker(t *testing.T, now *time.Time, opts ...circuit.Option) (*circuit.Breaker, *filestore.Store, string) {
	t.Helper()
	dir := t.TempDir()
	store, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	*now = time.Now()
	return circuit.New(store, append(opts, circuit.WithClock(func() time.Time { return *now }))...), store, dir
}

// run makes n calls to the named circuit, each with outcome o, and returns
// how many were rejected.
func run(t *testing.T, ctx context.Context, b *circuit.Breaker, name string, o circuit.Outcome, n int) (rejected int) {
	t.Helper()
	for range n {
		err := b.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) {
			if o != circuit.Success {
				return o, errDown
			}
			return o, nil
		})
		switch {
		case errors.Is(err, circuit.ErrOpen):
			rejected++
		case err != nil && !errors.Is(err, errDown):
			t.Fatalf("call to %s: %v", name, err)
		}
	}
	return rejected
}

// collect reads every metric from reader, one line per data point:
// `name[unit]{key=value,...} value`, sorted (a histogram's value is its
// count, sum and the count of each bucket that is not empty, by upper
// bound), and the collection's error.
func collect(t *testing.T, reader sdkmetric.Reader) ([]string, error) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	err := reader.Collect(t.Context(), &rm)
	var lines []string
	line := func(m metricdata.Metrics, attrs attribute.Set, value string) {
		var kvs []string
		for _, kv := range attrs.ToSlice() {
			kvs = append(kvs, fmt.Sprintf("%s=%s", kv.Key, kv.Value.String()))
		}
		lines = append(lines, fmt.Sprintf("%s[%s]{%s} %s", m.Name, m.Unit, strings.Join(kvs, ","), value))
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/circuitgen/circuitgen/runtime/otelcircuit" || sm.Scope.Version != "devel" {
			t.Errorf("instrumentation scope %q version %q", sm.Scope.Name, sm.Scope.Version)
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !d.IsMonotonic || d.Temporality != metricdata.CumulativeTemporality {
					t.Errorf("%s: a sum that is not a cumulative counter", m.Name)
				}
				for _, p := range d.DataPoints {
					line(m, p.Attributes, fmt.Sprint(p.Value))
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					line(m, p.Attributes, fmt.Sprint(p.Value))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					v := fmt.Sprintf("count=%d sum=%g", p.Count, p.Sum)
					for i, n := range p.BucketCounts {
						if n == 0 {
							continue
						}
						le := "+Inf"
						if i < len(p.Bounds) {
							le = fmt.Sprint(p.Bounds[i])
						}
						v += fmt.Sprintf(" le%s:%d", le, n)
					}
					line(m, p.Attributes, v)
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	slices.Sort(lines)
	return lines, err
}

func diff(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestObserver(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	obs, err := otelcircuit.NewObserver(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		t.Fatal(err)
	}
	spans := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)).Tracer("test")
	var now time.Time
	b, store, _ := newBreaker(t, &now, circuit.WithObserver(obs))

	ctx, span := tracer.Start(t.Context(), "checkout")
	run(t, ctx, b, "billing-api", circuit.Failure, 3) // closed → open
	if n := run(t, ctx, b, "billing-api", circuit.Success, 2); n != 2 {
		t.Fatalf("%d of 2 calls to an open circuit rejected", n)
	}
	now = now.Add(2 * time.Minute)
	if err := b.Run(ctx, "billing-api", policy, func(context.Context) (circuit.Outcome, error) {
		now = now.Add(40 * time.Millisecond) // the probe takes 40ms
		return circuit.Success, nil
	}); err != nil { // open → half_open → closed
		t.Fatal(err)
	}
	run(t, ctx, b, "billing-api", circuit.Ignored, 1)
	span.End()
	run(t, t.Context(), b, "search", circuit.Success, 2) // no span: metrics only
	run(t, t.Context(), b, "search", circuit.Failure, 3) // closed → open
	run(t, t.Context(), b, "search", circuit.Failure, 1) // rejected
	ctx, span = tracer.Start(t.Context(), "refund")
	if err := b.ForceOpen(ctx, "ledger", time.Hour); err != nil { // closed → open, forced
		t.Fatal(err)
	}
	if n := run(t, ctx, b, "ledger", circuit.Success, 1); n != 1 {
		t.Fatal("a call to a forced circuit was not rejected")
	}
	span.End()
	observing := circuit.New(store, circuit.WithClock(func() time.Time { return now }), circuit.WithObserver(obs), circuit.WithObserveOnly())
	ctx, span = tracer.Start(t.Context(), "observe")
	if n := run(t, ctx, observing, "ledger", circuit.Success, 2); n != 0 {
		t.Fatal("an observe-only circuit rejected a call")
	}
	span.End()

	got, err := collect(t, reader)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "metrics", got, []string{
		"circuitgen.circuit.call.duration[s]{circuitgen.call.outcome=failure,circuitgen.circuit.name=billing-api} count=3 sum=0 le0.005:3",
		"circuitgen.circuit.call.duration[s]{circuitgen.call.outcome=failure,circuitgen.circuit.name=search} count=3 sum=0 le0.005:3",
		"circuitgen.circuit.call.duration[s]{circuitgen.call.outcome=ignored,circuitgen.circuit.name=billing-api} count=1 sum=0 le0.005:1",
		"circuitgen.circuit.call.duration[s]{circuitgen.call.outcome=success,circuitgen.circuit.name=billing-api} count=1 sum=0.04 le0.05:1",
		"circuitgen.circuit.call.duration[s]{circuitgen.call.outcome=success,circuitgen.circuit.name=search} count=2 sum=0 le0.005:2",
		"circuitgen.circuit.calls[{call}]{circuitgen.call.outcome=failure,circuitgen.circuit.name=billing-api} 3",
		"circuitgen.circuit.calls[{call}]{circuitgen.call.outcome=failure,circuitgen.circuit.name=search} 3",
		"circuitgen.circuit.calls[{call}]{circuitgen.call.outcome=ignored,circuitgen.circuit.name=billing-api} 1",
		"circuitgen.circuit.calls[{call}]{circuitgen.call.outcome=success,circuitgen.circuit.name=billing-api} 1",
		"circuitgen.circuit.calls[{call}]{circuitgen.call.outcome=success,circuitgen.circuit.name=search} 2",
		"circuitgen.circuit.observed_rejections[{call}]{circuitgen.circuit.forced=true,circuitgen.circuit.name=ledger,circuitgen.circuit.state=open} 2",
		"circuitgen.circuit.rejections[{call}]{circuitgen.circuit.forced=false,circuitgen.circuit.name=billing-api,circuitgen.circuit.state=open} 2",
		"circuitgen.circuit.rejections[{call}]{circuitgen.circuit.forced=false,circuitgen.circuit.name=search,circuitgen.circuit.state=open} 1",
		"circuitgen.circuit.rejections[{call}]{circuitgen.circuit.forced=true,circuitgen.circuit.name=ledger,circuitgen.circuit.state=open} 1",
		"circuitgen.circuit.transitions[{transition}]{circuitgen.circuit.name=billing-api,circuitgen.transition.from=closed,circuitgen.transition.to=open} 1",
		"circuitgen.circuit.transitions[{transition}]{circuitgen.circuit.name=billing-api,circuitgen.transition.from=half_open,circuitgen.transition.to=closed} 1",
		"circuitgen.circuit.transitions[{transition}]{circuitgen.circuit.name=billing-api,circuitgen.transition.from=open,circuitgen.transition.to=half_open} 1",
		"circuitgen.circuit.transitions[{transition}]{circuitgen.circuit.name=ledger,circuitgen.transition.from=closed,circuitgen.transition.to=open} 1",
		"circuitgen.circuit.transitions[{transition}]{circuitgen.circuit.name=search,circuitgen.transition.from=closed,circuitgen.transition.to=open} 1",
	})

	var events []string
	for _, s := range spans.Ended() {
		for _, e := range s.Events() {
			var attrs []string
			for _, kv := range e.Attributes {
				attrs = append(attrs, fmt.Sprintf("%s=%s", kv.Key, kv.Value.String()))
			}
			events = append(events, s.Name()+": "+e.Name+" "+strings.Join(attrs, " "))
		}
	}
	diff(t, "span events", events, []string{
		"checkout: circuitgen.circuit.transition circuitgen.circuit.name=billing-api circuitgen.transition.from=closed circuitgen.transition.to=open circuitgen.circuit.generation=1",
		"checkout: circuitgen.call.rejected circuitgen.circuit.name=billing-api circuitgen.circuit.state=open circuitgen.circuit.forced=false circuitgen.circuit.retry_after=60",
		"checkout: circuitgen.call.rejected circuitgen.circuit.name=billing-api circuitgen.circuit.state=open circuitgen.circuit.forced=false circuitgen.circuit.retry_after=60",
		"checkout: circuitgen.circuit.transition circuitgen.circuit.name=billing-api circuitgen.transition.from=open circuitgen.transition.to=half_open circuitgen.circuit.generation=1",
		"checkout: circuitgen.circuit.transition circuitgen.circuit.name=billing-api circuitgen.transition.from=half_open circuitgen.transition.to=closed circuitgen.circuit.generation=2",
		"refund: circuitgen.circuit.transition circuitgen.circuit.name=ledger circuitgen.transition.from=closed circuitgen.transition.to=open circuitgen.circuit.generation=1",
		"refund: circuitgen.call.rejected circuitgen.circuit.name=ledger circuitgen.circuit.state=open circuitgen.circuit.forced=true circuitgen.circuit.retry_after=3600",
		"observe: circuitgen.call.observed_rejection circuitgen.circuit.name=ledger circuitgen.circuit.state=open circuitgen.circuit.forced=true circuitgen.circuit.retry_after=3600",
		"observe: circuitgen.call.observed_rejection circuitgen.circuit.name=ledger circuitgen.circuit.state=open circuitgen.circuit.forced=true circuitgen.circuit.retry_after=3600",
	})
}

func TestRegisterState(t *testing.T) {
	var now time.Time
	b, store, dir := newBreaker(t, &now)
	ctx := t.Context()
	run(t, ctx, b, "billing-api", circuit.Failure, 2)     // closed, 2 failures
	run(t, ctx, b, "payment-gateway", circuit.Failure, 3) // open
	run(t, ctx, b, "email-svc", circuit.Failure, 3)
	now = now.Add(2 * time.Minute)
	if _, err := b.Allow(ctx, "email-svc", policy); err != nil { // half_open: a probe in flight
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, circuit.Key("ledger")+".json"), []byte(`{"v":1`), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		register func(*sdkmetric.MeterProvider) error
		want     []string
		wantErr  string
	}{
		{
			name: "named circuits",
			register: func(mp *sdkmetric.MeterProvider) error {
				_, err := otelcircuit.RegisterState(mp, b, "payment-gateway", "billing-api", "email-svc", "ledger", "search", "billing-api")
				return err
			},
			want: []string{
				"circuitgen.circuit.failures[{failure}]{circuitgen.circuit.name=billing-api} 2",
				"circuitgen.circuit.failures[{failure}]{circuitgen.circuit.name=email-svc} 3",
				"circuitgen.circuit.failures[{failure}]{circuitgen.circuit.name=payment-gateway} 3",
				"circuitgen.circuit.failures[{failure}]{circuitgen.circuit.name=search} 0",
				"circuitgen.circuit.state_error[1]{circuitgen.circuit.name=billing-api} 0",
				"circuitgen.circuit.state_error[1]{circuitgen.circuit.name=email-svc} 0",
				"circuitgen.circuit.state_error[1]{circuitgen.circuit.name=ledger} 1",
				"circuitgen.circuit.state_error[1]{circuitgen.circuit.name=payment-gateway} 0",
				"circuitgen.circuit.state_error[1]{circuitgen.circuit.name=search} 0",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=billing-api,circuitgen.circuit.state=closed} 1",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=billing-api,circuitgen.circuit.state=half_open} 0",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=billing-api,circuitgen.circuit.state=open} 0",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=email-svc,circuitgen.circuit.state=closed} 0",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=email-svc,circuitgen.circuit.state=half_open} 1",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=email-svc,circuitgen.circuit.state=open} 0",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=payment-gateway,circuitgen.circuit.state=closed} 0",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=payment-gateway,circuitgen.circuit.state=half_open} 1",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=payment-gateway,circuitgen.circuit.state=open} 0",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=search,circuitgen.circuit.state=closed} 1",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=search,circuitgen.circuit.state=half_open} 0",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=search,circuitgen.circuit.state=open} 0",
			},
		},
		{
			name: "the store's listing fails",
			register: func(mp *sdkmetric.MeterProvider) error {
				_, err := otelcircuit.RegisterStateFunc(mp, b, store.Names) // the corrupt ledger record fails the listing
				return err
			},
			wantErr: "list circuits",
		},
		{
			name: "listed circuits",
			register: func(mp *sdkmetric.MeterProvider) error {
				_, err := otelcircuit.RegisterStateFunc(mp, b, func(context.Context) ([]string, error) {
					return []string{"billing-api"}, nil
				})
				return err
			},
			want: []string{
				"circuitgen.circuit.failures[{failure}]{circuitgen.circuit.name=billing-api} 2",
				"circuitgen.circuit.state_error[1]{circuitgen.circuit.name=billing-api} 0",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=billing-api,circuitgen.circuit.state=closed} 1",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=billing-api,circuitgen.circuit.state=half_open} 0",
				"circuitgen.circuit.state[1]{circuitgen.circuit.name=billing-api,circuitgen.circuit.state=open} 0",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			if err := tt.register(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))); err != nil {
				t.Fatal(err)
			}
			got, err := collect(t, reader)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Collect error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "metrics", got, slices.Sorted(slices.Values(tt.want)))
		})
	}

	// The open circuit's cooldown is over: it reads half-open, ready to
	// probe. Collecting never changes a circuit: no probe was claimed, and
	// the next call is the probe.
	snap, err := b.Snapshot(ctx, "payment-gateway")
	if err != nil || snap.State != circuit.StateHalfOpen || snap.Probing {
		t.Errorf("after collecting, payment-gateway is %+v (%v), want half-open, ready to probe", snap, err)
	}
	if tk, err := b.Allow(ctx, "payment-gateway", policy); err != nil || !tk.Probe() {
		t.Errorf("the call after collecting = %v, %v; want the probe", tk, err)
	}
}
