package bench

// The benchmarks of BENCHMARKS.md. Every benchmark has one sub-benchmark per
// implementation, named impl=NAME, so that benchstat compares them side by
// side (-col /impl):
//
//   - circuitgen: the generated GuardedBackend over the file store;
//   - gobreaker: github.com/sony/gobreaker/v2's Execute, in memory;
//   - failsafe: a github.com/failsafe-go/failsafe-go circuit breaker, in memory;
//   - naive: the generated GuardedBackend over naiveStore, which locks and
//     reads the record file on every admission and settlement;
//   - rawreplace (rows that write): rawReplace, once per durable write the
//     row makes, the cost of durability alone.
//
// bench/run.sh runs them; go test -run '^$' -bench . -benchmem ./bench/
// runs them once.

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"
)

// fake is the guarded backend: every method returns id and err.
type fake struct{ err error }

func (f fake) Get(_ context.Context, id int) (int, error)   { return id, f.err }
func (f fake) Count(_ context.Context, id int) (int, error) { return id, f.err }
func (f fake) Trip(_ context.Context, id int) (int, error)  { return id, f.err }
func (f fake) Cycle(_ context.Context, id int) (int, error) { return id, f.err }

// The peers' operations: the same work as fake's methods.
func peerUp() (int, error)   { return 1, nil }
func peerDown() (int, error) { return 0, ErrDown }

// fakeClock is an injected clock, so that a cooldown passes instantly.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// storeKind opens a fresh store of one kind in a test's temporary directory.
type storeKind struct {
	name string
	open func(tb testing.TB) circuit.Store
}

// stores are the two stores the generated wrapper is measured over.
var stores = []storeKind{
	{"circuitgen", func(tb testing.TB) circuit.Store {
		s, err := filestore.Open(filepath.Join(tb.TempDir(), "state"))
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}},
	{"naive", func(tb testing.TB) circuit.Store {
		return &naiveStore{dir: filepath.Join(tb.TempDir(), "state")}
	}},
}

// guarded returns one Breaker over store and the generated wrapper over a
// healthy and over a failing backend, both through that Breaker.
func guarded(store circuit.Store, opts ...circuit.Option) (b *circuit.Breaker, up, down *GuardedBackend) {
	b = circuit.New(store, opts...)
	return b, NewGuardedBackend(fake{}, b), NewGuardedBackend(fake{err: ErrDown}, b)
}

// newGobreaker returns a gobreaker that opens after threshold consecutive
// failures for timeout, counting only ErrDown, as the generated classifier does.
func newGobreaker(threshold uint32, timeout time.Duration) *gobreaker.CircuitBreaker[int] {
	return gobreaker.NewCircuitBreaker[int](gobreaker.Settings{
		Name:         "bench",
		MaxRequests:  1,
		Timeout:      timeout,
		ReadyToTrip:  func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= threshold },
		IsSuccessful: func(err error) bool { return !errors.Is(err, ErrDown) },
	})
}

// newFailsafe returns a failsafe-go count-based circuit breaker that opens
// after threshold failures for delay, counting only ErrDown, and an executor
// over it, built once.
func newFailsafe(threshold uint, delay time.Duration) (failsafe.Executor[int], circuitbreaker.CircuitBreaker[int]) {
	cb := circuitbreaker.NewBuilder[int]().HandleErrors(ErrDown).WithFailureThreshold(threshold).WithDelay(delay).Build()
	return failsafe.With[int](cb), cb
}

// impl is one implementation's sub-benchmark of a row.
type impl struct {
	name string
	run  func(b *testing.B)
}

// cpuRows are the rows whose sub-benchmarks report cpu-ns/op, the
// process's CPU time (getrusage) per op, setup included (a few calls
// against hundreds of thousands): the rows that run in this process and
// make no durable write, whose cost is CPU. It is the figure to compare on
// a machine shared with other work, which inflates wall time far more.
var cpuRows = map[string]bool{
	"ClosedSuccess": true, "ClosedSuccessByName": true, "ClosedSuccessRate": true,
	"OpenRejection": true, "OpenRejectionByName": true,
	"ClosedSuccessRateParallel": true, "OpenRejectionParallel": true, "ClosedSuccessParallel": true,
	"Snapshot": true,
}

// runImpls runs a row's sub-benchmarks in a fixed order.
func runImpls(b *testing.B, impls []impl) {
	row := strings.TrimPrefix(b.Name(), "Benchmark")
	for _, im := range impls {
		b.Run("impl="+im.name, func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime()
			im.run(b)
			if cpu := cpuTime() - start; cpuRows[row] && cpu > 0 && b.N > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// want fails the benchmark unless err matches target (nil: no error).
func want(b *testing.B, err, target error) {
	if target == nil && err != nil || target != nil && !errors.Is(err, target) {
		b.Fatalf("got error %v, want %v", err, target)
	}
}

// BenchmarkClosedSuccess measures a successful guarded call through a
// closed circuit: for circuitgen, the state shared with every process on
// the server, and no system call.
func BenchmarkClosedSuccess(b *testing.B) {
	ctx := context.Background()
	ours := func(kind storeKind) func(b *testing.B) {
		return func(b *testing.B) {
			_, up, _ := guarded(kind.open(b))
			_, err := up.Get(ctx, 1) // creates the record
			want(b, err, nil)
			for b.Loop() {
				_, err := up.Get(ctx, 1)
				want(b, err, nil)
			}
		}
	}
	runImpls(b, append([]impl{
		{"circuitgen", ours(stores[0])},
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
		{"naive", ours(stores[1])},
	}, closedPeers(ctx)...))
}

// BenchmarkOpenRejection measures a call rejected by an open circuit.
func BenchmarkOpenRejection(b *testing.B) {
	ctx := context.Background()
	ours := func(kind storeKind) func(b *testing.B) {
		return func(b *testing.B) {
			_, up, down := guarded(kind.open(b))
			_, err := down.Trip(ctx, 1) // opens for a day
			want(b, err, ErrDown)
			for b.Loop() {
				_, err := up.Trip(ctx, 1)
				want(b, err, circuit.ErrOpen)
			}
		}
	}
	runImpls(b, append([]impl{
		{"circuitgen", ours(stores[0])},
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
		{"naive", ours(stores[1])},
	}, rejectionPeers(ctx)...))
}

// rawRow returns the rawreplace sub-benchmark of a row that makes writes
// durable writes per op: that many rawReplace calls of a record-sized file.
func rawRow(writes int) impl {
	return impl{"rawreplace", func(b *testing.B) {
		dir := b.TempDir()
		path := filepath.Join(dir, "record.json")
		data := []byte(`{"v":1,"name":"bench-count","state":"closed","failures":1,"generation":1,` +
			`"incarnation":"0123456789abcdef0123456789abcdef","version":2,"updated_at":"2026-01-01T00:00:00Z"}` + "\n")
		for b.Loop() {
			for range writes {
				if err := rawReplace(dir, path, data); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportPerWrite(b, writes)
	}}
}

// reportPerWrite reports the time per durable write of a row that makes
// writes of them per op.
func reportPerWrite(b *testing.B, writes int) {
	if b.N > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(writes), "ns/write")
	}
}

// resetEvery is how many failures BenchmarkFailureCounts counts before it
// resets the count, untimed, so that the circuit never opens.
const resetEvery = 998

// BenchmarkFailureCounts measures a failure that counts but does not open
// the circuit (threshold 1000): one durable write for the file stores. Every
// resetEvery failures a success resets the count, untimed.
func BenchmarkFailureCounts(b *testing.B) {
	ctx := context.Background()
	ours := func(kind storeKind) func(b *testing.B) {
		return func(b *testing.B) {
			_, up, down := guarded(kind.open(b))
			_, err := up.Count(ctx, 1) // creates the record
			want(b, err, nil)
			for i := 0; b.Loop(); i++ {
				if i%resetEvery == resetEvery-1 {
					b.StopTimer()
					_, err := up.Count(ctx, 1)
					want(b, err, nil)
					b.StartTimer()
				}
				_, err := down.Count(ctx, 1)
				want(b, err, ErrDown)
			}
			reportPerWrite(b, 1)
		}
	}
	runImpls(b, []impl{
		{"circuitgen", ours(stores[0])},
		{"gobreaker", func(b *testing.B) {
			cb := newGobreaker(1000, time.Minute)
			for i := 0; b.Loop(); i++ {
				if i%resetEvery == resetEvery-1 {
					b.StopTimer()
					_, err := cb.Execute(peerUp)
					want(b, err, nil)
					b.StartTimer()
				}
				_, err := cb.Execute(peerDown)
				want(b, err, ErrDown)
			}
		}},
		{"failsafe", func(b *testing.B) {
			ex, _ := newFailsafe(1000, time.Minute)
			for i := 0; b.Loop(); i++ {
				if i%resetEvery == resetEvery-1 {
					b.StopTimer()
					_, err := ex.Get(peerUp)
					want(b, err, nil)
					b.StartTimer()
				}
				_, err := ex.Get(peerDown)
				want(b, err, ErrDown)
			}
		}},
		{"naive", ours(stores[1])},
		rawRow(1),
	})
}

// BenchmarkFailureOpens measures the failure that opens a closed circuit
// (threshold 1): one durable write for the file stores. After each, the
// cooldown passes on an injected clock and a probe closes the circuit
// again, untimed.
func BenchmarkFailureOpens(b *testing.B) { benchOpenClose(b, false) }

// cycleWrites is how many durable writes a half-open cycle makes: open,
// claim the probe, close.
const cycleWrites = 3

// BenchmarkHalfOpenCycle measures a whole cycle: a failure opens the
// circuit, the cooldown passes (an injected clock; 1ns for the peers), a
// probe is admitted and its success closes the circuit.
func BenchmarkHalfOpenCycle(b *testing.B) { benchOpenClose(b, true) }

// benchOpenClose runs, for each implementation, a failure that opens a
// closed circuit (threshold 1), then the cooldown's end and a probe that
// closes it again: timed only when cycle is set.
func benchOpenClose(b *testing.B, cycle bool) {
	ctx := context.Background()
	writes := 1
	if cycle {
		writes = cycleWrites
	}
	// The probe is untimed, between pause and resume, unless cycle is set.
	pause := func(b *testing.B) {
		if !cycle {
			b.StopTimer()
		}
	}
	resume := func(b *testing.B) {
		if !cycle {
			b.StartTimer()
		}
	}
	ours := func(kind storeKind) func(b *testing.B) {
		return func(b *testing.B) {
			clk := newFakeClock()
			_, up, down := guarded(kind.open(b), circuit.WithClock(clk.Now))
			_, err := up.Cycle(ctx, 1) // creates the record
			want(b, err, nil)
			for b.Loop() {
				_, err := down.Cycle(ctx, 1)
				want(b, err, ErrDown)
				pause(b)
				clk.Advance(time.Second)
				_, err = up.Cycle(ctx, 1)
				want(b, err, nil)
				resume(b)
			}
			reportPerWrite(b, writes)
		}
	}
	runImpls(b, []impl{
		{"circuitgen", ours(stores[0])},
		{"gobreaker", func(b *testing.B) {
			// gobreaker reads the wall clock: a 1ns timeout has passed by the
			// next call, as the injected cooldown has for the file stores.
			cb := newGobreaker(1, time.Nanosecond)
			for b.Loop() {
				_, err := cb.Execute(peerDown)
				want(b, err, ErrDown)
				pause(b)
				_, err = cb.Execute(peerUp)
				want(b, err, nil)
				if cb.State() != gobreaker.StateClosed {
					b.Fatal("the probe did not close the circuit")
				}
				resume(b)
			}
		}},
		{"failsafe", func(b *testing.B) {
			ex, cb := newFailsafe(1, time.Nanosecond)
			for b.Loop() {
				_, err := ex.Get(peerDown)
				want(b, err, ErrDown)
				pause(b)
				_, err = ex.Get(peerUp)
				want(b, err, nil)
				if !cb.IsClosed() {
					b.Fatal("the probe did not close the circuit")
				}
				resume(b)
			}
		}},
		{"naive", ours(stores[1])},
		rawRow(writes),
	})
}

// BenchmarkSnapshot measures reading an unchanged circuit's state: for
// circuitgen, Breaker.Snapshot with no file read; for the peers, their
// in-memory state and counts.
func BenchmarkSnapshot(b *testing.B) {
	ctx := context.Background()
	ours := func(kind storeKind) func(b *testing.B) {
		return func(b *testing.B) {
			br, up, down := guarded(kind.open(b))
			_, err := down.Get(ctx, 1) // a failure creates the record
			want(b, err, ErrDown)
			_, err = up.Get(ctx, 1) // a success counts it down to 0
			want(b, err, nil)
			for b.Loop() {
				snap, err := br.Snapshot(ctx, "bench-closed")
				if err != nil || snap.State != circuit.StateClosed || !snap.Exists {
					b.Fatalf("Snapshot = %+v, %v", snap, err)
				}
			}
		}
	}
	runImpls(b, []impl{
		{"circuitgen", ours(stores[0])},
		{"gobreaker", func(b *testing.B) {
			cb := newGobreaker(3, 30*time.Second)
			for b.Loop() {
				if cb.State() != gobreaker.StateClosed || cb.Counts().ConsecutiveFailures != 0 {
					b.Fatal("not closed")
				}
			}
		}},
		{"failsafe", func(b *testing.B) {
			_, cb := newFailsafe(3, 30*time.Second)
			for b.Loop() {
				if cb.State() != circuitbreaker.ClosedState || cb.Metrics().Failures() != 0 {
					b.Fatal("not closed")
				}
			}
		}},
		{"naive", ours(stores[1])},
	})
}
