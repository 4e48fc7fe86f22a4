package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

var benchPolicy = circuit.Policy{FailureThreshold: 5, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

func succeed(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }

// BenchmarkGuardedCall measures one healthy guarded call (closed circuit,
// the operation succeeds at once): two SELECTs, no write.
func BenchmarkGuardedCall(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s, _ := be.newStore(b)
			br := circuit.New(s)
			ctx := context.Background()
			if err := br.Run(ctx, "billing-api", benchPolicy, succeed); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := br.Run(ctx, "billing-api", benchPolicy, succeed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFailureCall measures a guarded call that fails without opening
// the circuit (threshold 1000) and one that succeeds after it, resetting the
// count: each settles with a compare-and-swap write.
func BenchmarkFailureCall(b *testing.B) {
	p := circuit.Policy{FailureThreshold: 1000, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s, _ := be.newStore(b)
			br := circuit.New(s)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				_ = br.Run(ctx, "billing-api", p, op(circuit.Failure))
				_ = br.Run(ctx, "billing-api", p, succeed)
			}
		})
	}
}
