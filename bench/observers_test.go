package bench

// The cost of observing a Breaker's calls, on the calls that dominate
// traffic, over the file store: no observer, a CallObserver that does
// nothing, prommetrics.Observer, and otelcircuit.Observer with the OTel
// SDK's meter provider, each a sub-benchmark of the same binary, for the
// ratios:
//
//	go test -run '^$' -bench Observers -benchmem ./bench/
//
// Beside ns/op each reports cpu-ns/op, the process's CPU time per call: on a
// machine shared with other work the wall clock also counts the time the
// benchmark waited for a CPU.

import (
	"context"
	"errors"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/circuitgen/circuitgen/runtime/otelcircuit"
	"github.com/circuitgen/circuitgen/runtime/prommetrics"
)

var errObservedDown = errors.New("dependency down")

func observedFail(context.Context) (circuit.Outcome, error) { return circuit.Failure, errObservedDown }

// idleObserver is a CallObserver that does nothing: what the Breaker itself spends
// on a call for its CallObservers, timing the call included.
type idleObserver struct{}

func (idleObserver) ObserveTransition(circuit.Transition)                                   {}
func (idleObserver) ObserveTransitionContext(context.Context, circuit.Transition)           {}
func (idleObserver) ObserveRejection(context.Context, *circuit.OpenError)                   {}
func (idleObserver) ObserveOutcome(context.Context, string, circuit.Outcome, time.Duration) {}

// observerKinds are the configurations compared, by sub-benchmark name.
var observerKinds = []struct {
	name string
	opts func(b *testing.B) []circuit.Option
}{
	{"none", func(*testing.B) []circuit.Option { return nil }},
	{"idle", func(*testing.B) []circuit.Option { return []circuit.Option{circuit.WithObserver(idleObserver{})} }},
	{"prometheus", func(*testing.B) []circuit.Option {
		return []circuit.Option{circuit.WithObserver(prommetrics.NewObserver())}
	}},
	{"otel", func(b *testing.B) []circuit.Option {
		obs, err := otelcircuit.NewObserver(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
		if err != nil {
			b.Fatal(err)
		}
		return []circuit.Option{circuit.WithObserver(obs)}
	}},
}

// benchObservers runs bench once per observer configuration, over a new file
// store. bench prepares, then calls loop around its b.Loop.
func benchObservers(b *testing.B, bench func(b *testing.B, br *circuit.Breaker, loop func(func()))) {
	for _, o := range observerKinds {
		b.Run("observer="+o.name, func(b *testing.B) {
			s, err := filestore.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			bench(b, circuit.New(s, o.opts(b)...), func(body func()) {
				b.ReportAllocs()
				start := cpuTime()
				for b.Loop() {
					body()
				}
				if cpu := cpuTime() - start; cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		})
	}
}

func BenchmarkObserversClosedSuccess(b *testing.B) {
	benchObservers(b, func(b *testing.B, br *circuit.Breaker, loop func(func())) {
		ctx := context.Background()
		if err := br.Run(ctx, "billing-api", observedPolicy, succeedOp); err != nil { // creates the record
			b.Fatal(err)
		}
		loop(func() {
			if err := br.Run(ctx, "billing-api", observedPolicy, succeedOp); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func BenchmarkObserversRejection(b *testing.B) {
	long := circuit.Policy{FailureThreshold: 1, Cooldown: 24 * time.Hour, ProbeLease: time.Minute}
	benchObservers(b, func(b *testing.B, br *circuit.Breaker, loop func(func())) {
		ctx := context.Background()
		if err := br.Run(ctx, "billing-api", long, observedFail); !errors.Is(err, errObservedDown) {
			b.Fatal(err)
		}
		loop(func() {
			if err := br.Run(ctx, "billing-api", long, succeedOp); !errors.Is(err, circuit.ErrOpen) {
				b.Fatal(err)
			}
		})
	})
}

var observedPolicy = circuit.Policy{FailureThreshold: 5, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}
