package bench

// The lean in-memory peers of BENCHMARKS.md, and the hand-written floor:
//
//   - eapache: github.com/eapache/go-resiliency's breaker (Run);
//   - mercari: github.com/mercari/go-circuitbreaker (Do), consecutive
//     failures, no counter-reset ticker (its default starts a goroutine per
//     closed breaker that clears the counts every second);
//   - gowrap: BackendWithCircuitBreaker, the decorator gowrap v1.4.3's
//     circuitbreaker template generated (gowrap_cb_gen.go);
//   - rubyist: github.com/rubyist/circuitbreaker v2.2.1 (Breaker.Call, no
//     call timeout), with ConsecutiveTripFunc and a constant backoff of the
//     open timeout (its default backoff is exponential from 500ms);
//   - hystrix: github.com/afex/hystrix-go (hystrix_test.go), not in
//     manyPeers: each of its commands keeps goroutines for the life of the
//     process;
//   - floor: floorBreaker, one atomic load, the call, an atomic add on
//     failure: what no breaker can go below.
//
// Each is configured as the other peers are: opens after 3 failures for
// 30s (closed rows), or after 1 for a day (rejection rows).

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/afex/hystrix-go/hystrix"
	"github.com/cenk/backoff"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/eapache/go-resiliency/breaker"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	mercari "github.com/mercari/go-circuitbreaker"
	rubyist "github.com/rubyist/circuitbreaker"
	"github.com/sony/gobreaker/v2"
)

// The peers' operations in the shapes eapache and mercari take.
func eapacheUp() error          { _, err := peerUp(); return err }
func eapacheDown() error        { _, err := peerDown(); return err }
func mercariUp() (any, error)   { return peerUp() }
func mercariDown() (any, error) { return peerDown() }

// newMercari returns a mercari breaker that opens after threshold
// consecutive failures for timeout.
func newMercari(threshold int64, timeout time.Duration) *mercari.CircuitBreaker {
	return mercari.New(
		mercari.WithTripFunc(mercari.NewTripFuncConsecutiveFailures(threshold)),
		mercari.WithOpenTimeout(timeout),
		mercari.WithCounterResetInterval(0),
	)
}

// newRubyist returns a rubyist breaker that opens after threshold
// consecutive failures for timeout.
func newRubyist(threshold int64, timeout time.Duration) *rubyist.Breaker {
	return rubyist.NewBreakerWithOptions(&rubyist.Options{
		ShouldTrip: rubyist.ConsecutiveTripFunc(threshold),
		BackOff:    backoff.NewConstantBackOff(timeout),
	})
}

// errFloorOpen is floorBreaker's rejection.
var errFloorOpen = errors.New("floor: open")

// floorBreaker is the hand-written floor: a closed call is one atomic load
// and the call; a failure adds one to the count and opens the circuit at
// the threshold, for good (no cooldown, no probe).
type floorBreaker struct {
	open      atomic.Bool
	failures  atomic.Int64
	threshold int64
}

func (f *floorBreaker) run(op func() (int, error)) (int, error) {
	if f.open.Load() {
		return 0, errFloorOpen
	}
	v, err := op()
	if err != nil && f.failures.Add(1) >= f.threshold {
		f.open.Store(true)
	}
	return v, err
}

// closedPeers are the closed-call sub-benchmarks of the lean peers.
func closedPeers(ctx context.Context) []impl {
	return []impl{
		{"eapache", func(b *testing.B) {
			cb := breaker.New(3, 1, 30*time.Second)
			for b.Loop() {
				want(b, cb.Run(eapacheUp), nil)
			}
		}},
		{"mercari", func(b *testing.B) {
			cb := newMercari(3, 30*time.Second)
			for b.Loop() {
				_, err := cb.Do(ctx, mercariUp)
				want(b, err, nil)
			}
		}},
		{"gowrap", func(b *testing.B) {
			d := NewBackendWithCircuitBreaker(fake{}, 3, 30*time.Second)
			for b.Loop() {
				_, err := d.Get(ctx, 1)
				want(b, err, nil)
			}
		}},
		{"floor", func(b *testing.B) {
			f := &floorBreaker{threshold: 3}
			for b.Loop() {
				_, err := f.run(peerUp)
				want(b, err, nil)
			}
		}},
		{"rubyist", func(b *testing.B) {
			cb := newRubyist(3, 30*time.Second)
			for b.Loop() {
				want(b, cb.Call(eapacheUp, 0), nil)
			}
		}},
		{"hystrix", func(b *testing.B) {
			name := newHystrix(b, 3, 30*time.Second)
			for b.Loop() {
				want(b, hystrix.Do(name, eapacheUp, nil), nil)
			}
			hystrixSettle(b)
		}},
	}
}

// rejectionPeers are the rejection sub-benchmarks of the lean peers: one
// failure opens for a day, then every call is rejected.
func rejectionPeers(ctx context.Context) []impl {
	return []impl{
		{"eapache", func(b *testing.B) {
			cb := breaker.New(1, 1, 24*time.Hour)
			want(b, cb.Run(eapacheDown), ErrDown)
			for b.Loop() {
				want(b, cb.Run(eapacheUp), breaker.ErrBreakerOpen)
			}
		}},
		{"mercari", func(b *testing.B) {
			cb := newMercari(1, 24*time.Hour)
			_, err := cb.Do(ctx, mercariDown)
			want(b, err, ErrDown)
			for b.Loop() {
				_, err := cb.Do(ctx, mercariUp)
				want(b, err, mercari.ErrOpen)
			}
		}},
		{"gowrap", func(b *testing.B) {
			// The decorator guards one backend: a failing one, whose first
			// failure opens it; the calls after it are rejected (its
			// rejection is a new error each time, matched by not being ErrDown).
			d := NewBackendWithCircuitBreaker(fake{err: ErrDown}, 1, 24*time.Hour)
			_, err := d.Get(ctx, 1)
			want(b, err, ErrDown)
			for b.Loop() {
				if _, err := d.Get(ctx, 1); err == nil || errors.Is(err, ErrDown) {
					b.Fatalf("got error %v, want the open circuit's", err)
				}
			}
		}},
		{"floor", func(b *testing.B) {
			f := &floorBreaker{threshold: 1}
			_, err := f.run(peerDown)
			want(b, err, ErrDown)
			for b.Loop() {
				_, err := f.run(peerUp)
				want(b, err, errFloorOpen)
			}
		}},
		{"rubyist", func(b *testing.B) {
			cb := newRubyist(1, 24*time.Hour)
			want(b, cb.Call(eapacheDown, 0), ErrDown)
			for b.Loop() {
				want(b, cb.Call(eapacheUp, 0), rubyist.ErrBreakerOpen)
			}
		}},
		{"hystrix", func(b *testing.B) {
			name := newHystrix(b, 1, 24*time.Hour)
			want(b, hystrix.Do(name, eapacheDown, nil), ErrDown)
			hystrixOpened(b, name)
			for b.Loop() {
				want(b, hystrix.Do(name, eapacheUp, nil), hystrix.ErrCircuitOpen)
			}
			hystrixSettle(b)
		}},
	}
}

// goroutines8 runs body in 8 goroutines (b.RunParallel under GOMAXPROCS 2
// with parallelism 4), and restores GOMAXPROCS. ns/op is wall time per
// call across them.
func goroutines8(b *testing.B, body func(pb *testing.PB)) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(body)
}

// BenchmarkClosedSuccessParallel measures the closed call of
// BenchmarkClosedSuccess made by 8 goroutines on one circuit.
func BenchmarkClosedSuccessParallel(b *testing.B) {
	ctx := context.Background()
	// loop runs call in 8 goroutines until the benchmark ends or it fails.
	loop := func(b *testing.B, call func() error) {
		goroutines8(b, func(pb *testing.PB) {
			for pb.Next() {
				if err := call(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	runImpls(b, []impl{
		{"circuitgen", func(b *testing.B) {
			_, up, _ := guarded(stores[0].open(b))
			_, err := up.Get(ctx, 1) // creates the record
			want(b, err, nil)
			loop(b, func() error { _, err := up.Get(ctx, 1); return err })
		}},
		{"gobreaker", func(b *testing.B) {
			cb := newGobreaker(3, 30*time.Second)
			loop(b, func() error { _, err := cb.Execute(peerUp); return err })
		}},
		{"failsafe", func(b *testing.B) {
			ex, _ := newFailsafe(3, 30*time.Second)
			loop(b, func() error { _, err := ex.Get(peerUp); return err })
		}},
		{"eapache", func(b *testing.B) {
			cb := breaker.New(3, 1, 30*time.Second)
			loop(b, func() error { return cb.Run(eapacheUp) })
		}},
		{"mercari", func(b *testing.B) {
			cb := newMercari(3, 30*time.Second)
			loop(b, func() error { _, err := cb.Do(ctx, mercariUp); return err })
		}},
		{"gowrap", func(b *testing.B) {
			d := NewBackendWithCircuitBreaker(fake{}, 3, 30*time.Second)
			loop(b, func() error { _, err := d.Get(ctx, 1); return err })
		}},
		{"floor", func(b *testing.B) {
			f := &floorBreaker{threshold: 3}
			loop(b, func() error { _, err := f.run(peerUp); return err })
		}},
		{"rubyist", func(b *testing.B) {
			cb := newRubyist(3, 30*time.Second)
			loop(b, func() error { return cb.Call(eapacheUp, 0) })
		}},
		{"hystrix", func(b *testing.B) {
			name := newHystrix(b, 3, 30*time.Second)
			loop(b, func() error { return hystrix.Do(name, eapacheUp, nil) })
			hystrixSettle(b)
		}},
	})
}

// BenchmarkOpenRejectionParallel measures the rejection of
// BenchmarkOpenRejection made by 8 goroutines on one circuit, against
// every peer. A rejection is matched with errors.Is, as in the one-goroutine
// row; gowrap's, a new error each time, by not being ErrDown.
func BenchmarkOpenRejectionParallel(b *testing.B) {
	ctx := context.Background()
	// loop runs call in 8 goroutines until the benchmark ends or a call is
	// not rejected with target (nil: any error but ErrDown).
	loop := func(b *testing.B, call func() error, target error) {
		goroutines8(b, func(pb *testing.PB) {
			for pb.Next() {
				if err := call(); target != nil && !errors.Is(err, target) || target == nil && (err == nil || errors.Is(err, ErrDown)) {
					b.Errorf("got error %v, want the open circuit's", err)
					return
				}
			}
		})
	}
	runImpls(b, []impl{
		{"circuitgen", func(b *testing.B) {
			_, up, down := guarded(stores[0].open(b))
			_, err := down.Trip(ctx, 1) // opens for a day
			want(b, err, ErrDown)
			loop(b, func() error { _, err := up.Trip(ctx, 1); return err }, circuit.ErrOpen)
		}},
		{"gobreaker", func(b *testing.B) {
			cb := newGobreaker(1, 24*time.Hour)
			_, err := cb.Execute(peerDown)
			want(b, err, ErrDown)
			loop(b, func() error { _, err := cb.Execute(peerUp); return err }, gobreaker.ErrOpenState)
		}},
		{"failsafe", func(b *testing.B) {
			ex, _ := newFailsafe(1, 24*time.Hour)
			_, err := ex.Get(peerDown)
			want(b, err, ErrDown)
			loop(b, func() error { _, err := ex.Get(peerUp); return err }, circuitbreaker.ErrOpen)
		}},
		{"eapache", func(b *testing.B) {
			cb := breaker.New(1, 1, 24*time.Hour)
			want(b, cb.Run(eapacheDown), ErrDown)
			loop(b, func() error { return cb.Run(eapacheUp) }, breaker.ErrBreakerOpen)
		}},
		{"mercari", func(b *testing.B) {
			cb := newMercari(1, 24*time.Hour)
			_, err := cb.Do(ctx, mercariDown)
			want(b, err, ErrDown)
			loop(b, func() error { _, err := cb.Do(ctx, mercariUp); return err }, mercari.ErrOpen)
		}},
		{"gowrap", func(b *testing.B) {
			d := NewBackendWithCircuitBreaker(fake{err: ErrDown}, 1, 24*time.Hour)
			_, err := d.Get(ctx, 1)
			want(b, err, ErrDown)
			loop(b, func() error { _, err := d.Get(ctx, 1); return err }, nil)
		}},
		{"floor", func(b *testing.B) {
			f := &floorBreaker{threshold: 1}
			_, err := f.run(peerDown)
			want(b, err, ErrDown)
			loop(b, func() error { _, err := f.run(peerUp); return err }, errFloorOpen)
		}},
		{"rubyist", func(b *testing.B) {
			cb := newRubyist(1, 24*time.Hour)
			want(b, cb.Call(eapacheDown, 0), ErrDown)
			loop(b, func() error { return cb.Call(eapacheUp, 0) }, rubyist.ErrBreakerOpen)
		}},
		{"hystrix", func(b *testing.B) {
			name := newHystrix(b, 1, 24*time.Hour)
			want(b, hystrix.Do(name, eapacheDown, nil), ErrDown)
			hystrixOpened(b, name)
			loop(b, func() error { return hystrix.Do(name, eapacheUp, nil) }, hystrix.ErrCircuitOpen)
			hystrixSettle(b)
		}},
	})
}

// manyPeers are BenchmarkManyCircuits' sub-benchmarks of the lean peers:
// one breaker per circuit, each built by prepare and called once by measure.
func manyPeers(ctx context.Context, n int, measure func(b *testing.B, prepare func() func(i int) error)) []impl {
	return []impl{
		{"eapache", func(b *testing.B) {
			measure(b, func() func(int) error {
				cbs := make([]*breaker.Breaker, n)
				for i := range cbs {
					cbs[i] = breaker.New(3, 1, 30*time.Second)
				}
				return func(i int) error { return cbs[i].Run(eapacheUp) }
			})
		}},
		{"mercari", func(b *testing.B) {
			measure(b, func() func(int) error {
				cbs := make([]*mercari.CircuitBreaker, n)
				for i := range cbs {
					cbs[i] = newMercari(3, 30*time.Second)
				}
				return func(i int) error { _, err := cbs[i].Do(ctx, mercariUp); return err }
			})
		}},
		{"gowrap", func(b *testing.B) {
			measure(b, func() func(int) error {
				ds := make([]*BackendWithCircuitBreaker, n)
				for i := range ds {
					ds[i] = NewBackendWithCircuitBreaker(fake{}, 3, 30*time.Second)
				}
				return func(i int) error { _, err := ds[i].Get(ctx, i); return err }
			})
		}},
		{"rubyist", func(b *testing.B) {
			measure(b, func() func(int) error {
				cbs := make([]*rubyist.Breaker, n)
				for i := range cbs {
					cbs[i] = newRubyist(3, 30*time.Second)
				}
				return func(i int) error { return cbs[i].Call(eapacheUp, 0) }
			})
		}},
		{"floor", func(b *testing.B) {
			measure(b, func() func(int) error {
				fs := make([]floorBreaker, n) // values: the floor's layout
				for i := range fs {
					fs[i].threshold = 3
				}
				return func(i int) error { _, err := fs[i].run(peerUp); return err }
			})
		}},
	}
}
