//go:build linux

package filestore_test

// Benchmarks of a circuit.Breaker over the file store, for profiling:
//
//	go test -run '^$' -bench . -benchmem ./runtime/filestore/
//
// The comparisons with the peers (gobreaker, failsafe-go) are bench/'s.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

func succeed(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
func fail(context.Context) (circuit.Outcome, error)    { return circuit.Failure, errDown }

// benchBreaker returns a Breaker over a new file store in a fresh directory.
func benchBreaker(b *testing.B, opts ...circuit.Option) *circuit.Breaker {
	b.Helper()
	s, err := filestore.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return circuit.New(s, opts...)
}

func BenchmarkClosedSuccess(b *testing.B) {
	b.Run("filestore", func(b *testing.B) {
		br := benchBreaker(b)
		ctx := context.Background()
		if err := br.Run(ctx, name, policy, succeed); err != nil { // creates the record
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := br.Run(ctx, name, policy, succeed); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkOpenRejection(b *testing.B) {
	long := circuit.Policy{FailureThreshold: 1, Cooldown: 24 * time.Hour, ProbeLease: time.Minute}
	b.Run("filestore", func(b *testing.B) {
		br := benchBreaker(b)
		ctx := context.Background()
		if err := br.Run(ctx, name, long, fail); !errors.Is(err, errDown) {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := br.Run(ctx, name, long, succeed); !errors.Is(err, circuit.ErrOpen) {
				b.Fatalf("Run = %v, want an OpenError", err)
			}
		}
	})
}

// BenchmarkFailureWrites measures a counted failure in the closed state:
// for the file store, one durable write. The count is reset, untimed, before
// it reaches the threshold.
func BenchmarkFailureWrites(b *testing.B) {
	const threshold = 1000
	p := circuit.Policy{FailureThreshold: threshold, Cooldown: time.Minute, ProbeLease: time.Minute}
	b.Run("filestore", func(b *testing.B) {
		br := benchBreaker(b)
		ctx := context.Background()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%(threshold-1) == threshold-2 {
				b.StopTimer()
				if err := br.Run(ctx, name, p, succeed); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if err := br.Run(ctx, name, p, fail); !errors.Is(err, errDown) {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHalfOpenCycle measures one whole cycle: a failure opens the
// circuit, the cooldown passes, a probe is admitted and its success closes
// the circuit. For the file store that is three durable writes (open, claim,
// close).
func BenchmarkHalfOpenCycle(b *testing.B) {
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second}
	b.Run("filestore", func(b *testing.B) {
		clk := newClock()
		br := benchBreaker(b, circuit.WithClock(clk.Now))
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := br.Run(ctx, name, p, fail); !errors.Is(err, errDown) {
				b.Fatal(err)
			}
			clk.Advance(p.Cooldown)
			if err := br.Run(ctx, name, p, succeed); err != nil {
				b.Fatal(err)
			}
		}
	})
}
