package bench

// The rows of BENCHMARKS.md beyond the generated wrapper's: calls by name
// (Breaker.Run), two goroutines on one circuit, and 100,000 circuits in one
// process. Each row has the sub-benchmarks impl=circuitgen, impl=gobreaker
// and impl=failsafe, as in bench_test.go. The peers have no by-name form:
// their by-name rows call the same prepared breaker as the prepared-handle
// rows, which is what a caller of theirs keeps.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cenk/backoff"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	mercari "github.com/mercari/go-circuitbreaker"
	rubyist "github.com/rubyist/circuitbreaker"
	"github.com/sony/gobreaker/v2"
)

// runOp is the operation of the rows that call circuitgen's Run.
func runOp(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }

// failOp is the operation that opens a circuit.
func failOp(context.Context) (circuit.Outcome, error) { return circuit.Failure, ErrDown }

// BenchmarkClosedSuccessByName measures a successful call through a closed
// circuit by its name and policy (Breaker.Run), as a hand-written guarded
// call makes it, over the file store.
func BenchmarkClosedSuccessByName(b *testing.B) {
	ctx := context.Background()
	runImpls(b, []impl{
		{"circuitgen", func(b *testing.B) {
			br := circuit.New(stores[0].open(b))
			want(b, br.Run(ctx, "bench-closed", policyBenchClosed, runOp), nil) // creates the record
			for b.Loop() {
				want(b, br.Run(ctx, "bench-closed", policyBenchClosed, runOp), nil)
			}
		}},
		{"gobreaker", func(b *testing.B) {
			cb := newGobreaker(3, 30*time.Second)
			for b.Loop() {
				_, err := cb.Execute(peerUp)
				want(b, err, nil)
			}
		}},
		{"failsafe", func(b *testing.B) {
			ex, _ := newFailsafe(3, 30*time.Second)
			for b.Loop() {
				_, err := ex.Get(peerUp)
				want(b, err, nil)
			}
		}},
	})
}

// BenchmarkOpenRejectionByName measures a call rejected by an open circuit,
// called by its name and policy (Breaker.Run), over the file store.
func BenchmarkOpenRejectionByName(b *testing.B) {
	ctx := context.Background()
	runImpls(b, []impl{
		{"circuitgen", func(b *testing.B) {
			br := circuit.New(stores[0].open(b))
			want(b, br.Run(ctx, "bench-trip", policyBenchTrip, failOp), ErrDown) // opens for a day
			for b.Loop() {
				want(b, br.Run(ctx, "bench-trip", policyBenchTrip, runOp), circuit.ErrOpen)
			}
		}},
		{"gobreaker", func(b *testing.B) {
			cb := newGobreaker(1, 24*time.Hour)
			_, err := cb.Execute(peerDown)
			want(b, err, ErrDown)
			for b.Loop() {
				_, err := cb.Execute(peerUp)
				want(b, err, gobreaker.ErrOpenState)
			}
		}},
		{"failsafe", func(b *testing.B) {
			ex, _ := newFailsafe(1, 24*time.Hour)
			_, err := ex.Get(peerDown)
			want(b, err, ErrDown)
			for b.Loop() {
				_, err := ex.Get(peerUp)
				want(b, err, circuitbreaker.ErrOpen)
			}
		}},
	})
}

// parallel runs body in exactly two goroutines (b.RunParallel under
// GOMAXPROCS 2 with parallelism 1), and restores GOMAXPROCS. ns/op is wall
// time per call across both.
func parallel(b *testing.B, body func(pb *testing.PB)) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	b.SetParallelism(1)
	b.ResetTimer()
	b.RunParallel(body)
}

// BenchmarkClosedSuccessRateParallel measures the rate rule's closed call
// (BenchmarkClosedSuccessRate) made by two goroutines on one circuit.
func BenchmarkClosedSuccessRateParallel(b *testing.B) {
	ctx := context.Background()
	runImpls(b, []impl{
		{"circuitgen", func(b *testing.B) {
			c := circuit.New(stores[0].open(b)).Circuit("bench", ratePolicy)
			want(b, c.Run(ctx, runOp), nil) // creates the record and the window file
			parallel(b, func(pb *testing.PB) {
				for pb.Next() {
					if err := c.Run(ctx, runOp); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}},
		{"gobreaker", func(b *testing.B) {
			cb := newRateGobreaker()
			parallel(b, func(pb *testing.PB) {
				for pb.Next() {
					if _, err := cb.Execute(peerUp); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}},
		{"failsafe", func(b *testing.B) {
			ex := newRateFailsafe()
			parallel(b, func(pb *testing.PB) {
				for pb.Next() {
					if _, err := ex.Get(peerUp); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}},
		{"mercari", func(b *testing.B) {
			cb := newRateMercari()
			parallel(b, func(pb *testing.PB) {
				for pb.Next() {
					if _, err := cb.Do(ctx, mercariUp); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}},
		{"rubyist", func(b *testing.B) {
			cb := newRateRubyist()
			parallel(b, func(pb *testing.PB) {
				for pb.Next() {
					if err := cb.Call(eapacheUp, 0); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}},
	})
}

// newRateGobreaker is BenchmarkClosedSuccessRate's gobreaker: the rate rule
// as a ratio ReadyToTrip, cleared every minute.
func newRateGobreaker() *gobreaker.CircuitBreaker[int] {
	return gobreaker.NewCircuitBreaker[int](gobreaker.Settings{
		Name:        "bench",
		MaxRequests: 1,
		Interval:    time.Minute,
		Timeout:     30 * time.Second,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.Requests >= 20 && float64(c.TotalFailures)/float64(c.Requests) >= 0.5
		},
		IsSuccessful: func(err error) bool { return !errors.Is(err, ErrDown) },
	})
}

// newRateFailsafe is BenchmarkClosedSuccessRate's failsafe: its time-based
// failure rate threshold.
func newRateFailsafe() failsafe.Executor[int] {
	cb := circuitbreaker.NewBuilder[int]().HandleErrors(ErrDown).
		WithFailureRateThreshold(0.5, 20, time.Minute).WithDelay(30 * time.Second).Build()
	return failsafe.With[int](cb)
}

// newRateMercari is BenchmarkClosedSuccessRate's mercari: its failure-rate
// trip function, the counters reset every minute.
func newRateMercari() *mercari.CircuitBreaker {
	return mercari.New(mercari.WithTripFunc(mercari.NewTripFuncFailureRate(20, 0.5)),
		mercari.WithOpenTimeout(30*time.Second), mercari.WithCounterResetInterval(time.Minute))
}

// newRateRubyist is BenchmarkClosedSuccessRate's rubyist: its rate trip
// function over a one-minute window.
func newRateRubyist() *rubyist.Breaker {
	return rubyist.NewBreakerWithOptions(&rubyist.Options{
		ShouldTrip: rubyist.RateTripFunc(0.5, 20), WindowTime: time.Minute,
		BackOff: backoff.NewConstantBackOff(30 * time.Second),
	})
}

// manyCount is how many circuits BenchmarkManyCircuits makes: 100,000, or
// BENCH_CIRCUITS.
func manyCount(b *testing.B) int {
	if s := os.Getenv("BENCH_CIRCUITS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			b.Fatalf("BENCH_CIRCUITS=%q: want a number of at least 2", s)
		}
		return n
	}
	return 100_000
}

// manyName is the name of circuit i of BenchmarkManyCircuits.
func manyName(i int) string { return fmt.Sprintf("many-%06d", i) }

// heapInUse returns the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// pick returns a pseudo-random index below n from the state *x (an LCG):
// the same sequence for every implementation, at the cost of a multiply.
func pick(x *uint64, n int) int {
	*x = *x*6364136223846793005 + 1442695040888963407
	return int((*x >> 33) % uint64(n))
}

// BenchmarkManyCircuits measures a process with 100,000 circuits, each
// called before: ns/op (and cpu-ns/op, the process's CPU time of the timed
// loop) is a successful closed call on a circuit picked at random; heap-MB the heap in use after a collection, less the heap before
// the circuits were made; ready-s the time from nothing to a handle on
// every circuit, ready for calls; warm-s the time after that until every
// circuit has made its first call. For circuitgen the records are on disk
// already, as a process restarting finds them (written untimed, in the
// form the file store writes them): ready-s is opening the store and a
// prepared handle (Breaker.Circuit, no I/O) per circuit; a circuit's first
// call reads its record (warm-s). For the peers, one breaker per circuit
// (ready-s), each then called once (warm-s).
func BenchmarkManyCircuits(b *testing.B) {
	ctx := context.Background()
	n := manyCount(b)
	// measure runs prepare, which makes n circuits and returns the call on
	// circuit i, calls each circuit once, and reports heap, ready and warm
	// times before timing calls at random.
	measure := func(b *testing.B, prepare func() func(i int) error) {
		before := heapInUse()
		start := time.Now()
		call := prepare()
		ready := time.Since(start)
		for i := range n {
			if err := call(i); err != nil {
				b.Fatal(err)
			}
		}
		warm := time.Since(start) - ready
		// The heap may end below where it began (garbage of earlier rows
		// collected): no growth, not a wrapped-around subtraction.
		heap := max(heapInUse(), before) - before
		x := uint64(1)
		cpu := cpuTime()
		for b.Loop() {
			if err := call(pick(&x, n)); err != nil {
				b.Fatal(err)
			}
		}
		if cpu = cpuTime() - cpu; cpu > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
		b.ReportMetric(float64(heap)/1e6, "heap-MB")
		b.ReportMetric(ready.Seconds(), "ready-s")
		b.ReportMetric(warm.Seconds(), "warm-s")
		runtime.KeepAlive(call)
	}
	// circuitgen runs the circuits of a store with their records on disk
	// (each failed once since, say) or with none (none ever failed: a
	// healthy circuit writes no record).
	circuitgen := func(records bool) func(b *testing.B) {
		return func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "state")
			if records {
				writeManyRecords(b, dir, n)
			}
			measure(b, func() func(int) error {
				s, err := filestore.Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				br := circuit.New(s)
				cs := make([]*circuit.Circuit, n)
				for i := range cs {
					cs[i] = br.Circuit(manyName(i), policyBenchClosed)
				}
				return func(i int) error { return cs[i].Run(ctx, runOp) }
			})
		}
	}
	runImpls(b, append([]impl{
		{"circuitgen", circuitgen(true)},
		{"circuitgen-norecords", circuitgen(false)},
		{"gobreaker", func(b *testing.B) {
			measure(b, func() func(int) error {
				cbs := make([]*gobreaker.CircuitBreaker[int], n)
				for i := range cbs {
					cbs[i] = gobreaker.NewCircuitBreaker[int](gobreaker.Settings{
						Name:         manyName(i),
						MaxRequests:  1,
						Timeout:      30 * time.Second,
						ReadyToTrip:  func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 3 },
						IsSuccessful: func(err error) bool { return !errors.Is(err, ErrDown) },
					})
				}
				return func(i int) error { _, err := cbs[i].Execute(peerUp); return err }
			})
		}},
		{"failsafe", func(b *testing.B) {
			measure(b, func() func(int) error {
				exs := make([]failsafe.Executor[int], n)
				for i := range exs {
					exs[i], _ = newFailsafe(3, 30*time.Second)
				}
				return func(i int) error { _, err := exs[i].Get(peerUp); return err }
			})
		}},
	}, manyPeers(ctx, n, measure)...))
}

// writeManyRecords makes n closed circuits in the file store's directory
// dir: the first by a call, the others by writing its record again under
// their names and incarnations, as the store writes records (a write of
// each would cost n fsyncs).
func writeManyRecords(b testing.TB, dir string, n int) {
	s, err := filestore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	first := manyName(0)
	if err := circuit.New(s).Clear(context.Background(), first); err != nil { // a closed record
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, circuit.Key(first)+".json"))
	if err != nil {
		b.Fatal(err)
	}
	var rec struct {
		Name        string `json:"name"`
		Incarnation string `json:"incarnation"`
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.Name != first || len(rec.Incarnation) != 32 {
		b.Fatalf("the first record %q: %v", data, err)
	}
	for i := 1; i < n; i++ {
		name := manyName(i)
		d := bytes.Replace(data, []byte(`"name":"`+first+`"`), []byte(`"name":"`+name+`"`), 1)
		d = bytes.Replace(d, []byte(rec.Incarnation), fmt.Appendf(nil, "%032x", i), 1)
		if err := os.WriteFile(filepath.Join(dir, circuit.Key(name)+".json"), d, 0o600); err != nil {
			b.Fatal(err)
		}
	}
}
