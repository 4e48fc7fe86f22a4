//go:build linux

package filestore_test

// Benchmarks of a circuit.Breaker over the file store, each beside
// github.com/sony/gobreaker/v2 doing the same work in memory, for the ratio:
//
//	go test -run '^$' -bench . -benchmem ./runtime/filestore/
//
// The file store's numbers include what gobreaker does not do: sharing the
// state with every process on the server and making each change durable
// (two fsyncs per write).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

func succeed(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
func fail(context.Context) (circuit.Outcome, error)    { return circuit.Failure, errDown }

func gbSucceed() (struct{}, error) { return struct{}{}, nil }
func gbFail() (struct{}, error)    { return struct{}{}, errDown }

// benchBreaker returns a Breaker over a new file store in a fresh directory.
func benchBreaker(b *testing.B, opts ...circuit.Option) *circuit.Breaker {
	b.Helper()
	s, err := filestore.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return circuit.New(s, opts...)
}

// gbBreaker returns a gobreaker that opens after threshold consecutive
// failures, for cooldown.
func gbBreaker(threshold uint32, cooldown time.Duration) *gobreaker.CircuitBreaker[struct{}] {
	return gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        name,
		MaxRequests: 1,
		Timeout:     cooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= threshold },
	})
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
	b.Run("gobreaker", func(b *testing.B) {
		cb := gbBreaker(uint32(policy.FailureThreshold), policy.Cooldown)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Execute(gbSucceed); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkOpenRejection(b *testing.B) {
	long := circuit.Policy{FailureThreshold: 1, Cooldown: circuit.MaxCooldown, ProbeLease: time.Minute}
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
	b.Run("gobreaker", func(b *testing.B) {
		cb := gbBreaker(1, long.Cooldown)
		if _, err := cb.Execute(gbFail); !errors.Is(err, errDown) {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Execute(gbSucceed); !errors.Is(err, gobreaker.ErrOpenState) {
				b.Fatalf("Execute = %v, want ErrOpenState", err)
			}
		}
	})
}

// BenchmarkFailureWrites measures a counted failure in the closed state:
// for the file store, one durable write. The count is reset, untimed, before
// it reaches the threshold.
func BenchmarkFailureWrites(b *testing.B) {
	const threshold = circuit.MaxFailureThreshold
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
	b.Run("gobreaker", func(b *testing.B) {
		cb := gbBreaker(threshold, p.Cooldown)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%(threshold-1) == threshold-2 {
				b.StopTimer()
				if _, err := cb.Execute(gbSucceed); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			if _, err := cb.Execute(gbFail); !errors.Is(err, errDown) {
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
	b.Run("gobreaker", func(b *testing.B) {
		// gobreaker reads the wall clock; a 1ns timeout has always passed by
		// the next call, as the injected cooldown has for the file store.
		cb := gbBreaker(1, time.Nanosecond)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Execute(gbFail); !errors.Is(err, errDown) {
				b.Fatal(err)
			}
			if _, err := cb.Execute(gbSucceed); err != nil {
				b.Fatalf("probe: %v", err)
			}
			if cb.State() != gobreaker.StateClosed {
				b.Fatal("the probe did not close the circuit")
			}
		}
	})
}
