package circuit_test

import (
	"context"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// BenchmarkHappyDeadline measures a successful call through a closed
// circuit, each under a context.WithTimeout of its own, as a server's
// handlers make them: settling must not make the context's Done channel.
func BenchmarkHappyDeadline(b *testing.B) {
	clock := newClock()
	br := circuit.New(newMemStore(b, clock), circuit.WithClock(clock.Now))
	p := circuit.Policy{FailureThreshold: 5, Cooldown: time.Minute, ProbeLease: time.Second}
	if err := br.Run(b.Context(), "billing-api", p, succeed); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := br.Run(ctx, "billing-api", p, succeed); err != nil {
			b.Fatal(err)
		}
		cancel()
	}
}

// BenchmarkObserveOnly measures a successful call through a closed circuit
// (the prepared handle over the in-memory store) that rejects, and one that
// observes only: the same work.
func BenchmarkObserveOnly(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts []circuit.Option
	}{{"rejects", nil}, {"observe-only", []circuit.Option{circuit.WithObserveOnly()}}} {
		b.Run("mode="+mode.name, func(b *testing.B) {
			clock := newClock()
			c := circuit.New(newMemStore(b, clock), append(mode.opts, circuit.WithClock(clock.Now))...).Circuit(testName, pol)
			ctx := context.Background()
			if err := c.Run(ctx, succeed); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Run(ctx, succeed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
