package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

var benchPolicy = circuit.Policy{FailureThreshold: 5, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

func succeed(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }

// BenchmarkGuardedCallParallel is BenchmarkGuardedCall from GOMAXPROCS
// goroutines on one circuit. gobreaker's distributed breaker holds its
// lock across the call and sleeps 500ms when it finds it taken, so it is
// not run here.
func BenchmarkGuardedCallParallel(b *testing.B) {
	s, _ := newStore(b)
	br := circuit.New(s)
	ctx := context.Background()
	if err := br.Run(ctx, "billing-api", benchPolicy, succeed); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := br.Run(ctx, "billing-api", benchPolicy, succeed); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkStore measures the store's operations alone.
func BenchmarkStore(b *testing.B) {
	s, _ := newStore(b)
	ctx := context.Background()
	_, now, err := s.Load(ctx, "billing-api")
	if err != nil {
		b.Fatal(err)
	}
	rec := machine.Cleared(nil, "billing-api", now, driver.NewID)
	if err := s.Replace(ctx, "billing-api", nil, rec); err != nil {
		b.Fatal(err)
	}
	b.Run("Load", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := s.Load(ctx, "billing-api"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Replace", func(b *testing.B) {
		for b.Loop() {
			next := *rec
			next.Version++
			if err := s.Replace(ctx, "billing-api", rec, &next); err != nil {
				b.Fatal(err)
			}
			rec = &next
		}
	})
}
