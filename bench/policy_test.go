package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"
)

// ratePolicy opens a circuit when at least half of at least 20 calls in the
// last minute failed; the consecutive rule is off.
var ratePolicy = circuit.Policy{FailureRate: 0.5, MinCalls: 20, Window: time.Minute,
	Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

// BenchmarkClosedSuccessRate measures a successful call through a closed
// circuit under a failure-rate rule. For circuitgen: the prepared handle
// (circuit.Circuit) over the file store, whose window counts every process
// of the state directory shares; for gobreaker, the same rule as a ratio
// ReadyToTrip over its in-memory counts, cleared every minute (Interval);
// for failsafe, its time-based failure rate threshold.
func BenchmarkClosedSuccessRate(b *testing.B) {
	ctx := context.Background()
	up := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
	runImpls(b, []impl{
		{"circuitgen", func(b *testing.B) {
			c := circuit.New(stores[0].open(b)).Circuit("bench", ratePolicy)
			want(b, c.Run(ctx, up), nil) // creates the record and the window file
			for b.Loop() {
				want(b, c.Run(ctx, up), nil)
			}
		}},
		{"gobreaker", func(b *testing.B) {
			cb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{
				Name:        "bench",
				MaxRequests: 1,
				Interval:    time.Minute,
				Timeout:     30 * time.Second,
				ReadyToTrip: func(c gobreaker.Counts) bool {
					return c.Requests >= 20 && float64(c.TotalFailures)/float64(c.Requests) >= 0.5
				},
				IsSuccessful: func(err error) bool { return !errors.Is(err, ErrDown) },
			})
			for b.Loop() {
				_, err := cb.Execute(peerUp)
				want(b, err, nil)
			}
		}},
		{"failsafe", func(b *testing.B) {
			cb := circuitbreaker.NewBuilder[int]().HandleErrors(ErrDown).
				WithFailureRateThreshold(0.5, 20, time.Minute).WithDelay(30 * time.Second).Build()
			ex := failsafe.With[int](cb)
			for b.Loop() {
				_, err := ex.Get(peerUp)
				want(b, err, nil)
			}
		}},
		{"mercari", func(b *testing.B) {
			cb := newRateMercari()
			for b.Loop() {
				_, err := cb.Do(ctx, mercariUp)
				want(b, err, nil)
			}
		}},
		{"rubyist", func(b *testing.B) {
			cb := newRateRubyist()
			for b.Loop() {
				want(b, cb.Call(eapacheUp, 0), nil)
			}
		}},
	})
}
