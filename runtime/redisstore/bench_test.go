package redisstore_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

var benchPolicy = circuit.Policy{FailureThreshold: 5, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

func succeed(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }

// newGobreaker returns a gobreaker DistributedCircuitBreaker on the test
// server, with a circuit name of its own.
func newGobreaker(tb testing.TB, h *counter) *gobreaker.DistributedCircuitBreaker[struct{}] {
	tb.Helper()
	c := newClient(tb, testenv.RedisURL(tb))
	if h != nil {
		c.AddHook(h)
	}
	name := testPrefix(tb, c) + "gobreaker"
	tb.Cleanup(func() {
		c.Del(context.Background(), "gobreaker:mutex:"+name, "gobreaker:state:"+name)
	})
	cb, err := gobreaker.NewDistributedCircuitBreaker[struct{}](newGobreakerStore(c), gobreaker.Settings{
		Name:    name,
		Timeout: 30 * time.Second,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= 5
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return cb
}

// TestGobreakerRoundTrips counts what a healthy call costs gobreaker's
// DistributedCircuitBreaker on the same server: GET, SET NX PX (lock), SET,
// unlock script, with the lock held across the call.
func TestGobreakerRoundTrips(t *testing.T) {
	h := &counter{}
	cb := newGobreaker(t, h)
	if _, err := cb.Execute(func() (struct{}, error) { return struct{}{}, nil }); err != nil {
		t.Fatal(err)
	}
	h.take()
	if _, err := cb.Execute(func() (struct{}, error) { return struct{}{}, nil }); err != nil {
		t.Fatal(err)
	}
	got := h.take()
	t.Logf("gobreaker distributed, healthy call: %d round trips %v", len(got), got)
	if want := []string{"get", "set", "set", "evalsha"}; !slices.Equal(got, want) {
		t.Errorf("commands %v, want GET, SET NX, SET and the unlock script", got)
	}
}

// BenchmarkGuardedCall measures one healthy guarded call (closed circuit,
// the operation succeeds at once) on loopback against the test server:
// circuitgen's Breaker on this store without copies and with them, the
// same call on the file store (the copies' target: a cached call within
// 1.5× of it), and gobreaker's DistributedCircuitBreaker with a go-redis
// SharedDataStore.
func BenchmarkGuardedCall(b *testing.B) {
	run := func(b *testing.B, s circuit.Store) {
		br := circuit.New(s)
		ctx := context.Background()
		for range 2 {
			if err := br.Run(ctx, "billing-api", benchPolicy, succeed); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := br.Run(ctx, "billing-api", benchPolicy, succeed); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("circuitgen", func(b *testing.B) {
		s, _ := newStore(b)
		run(b, s)
	})
	b.Run("circuitgen-cached", func(b *testing.B) {
		c := newClient(b, testenv.RedisURL(b))
		run(b, newCached(b, c, testPrefix(b, c)))
	})
	b.Run("filestore", func(b *testing.B) {
		s, err := filestore.Open(filepath.Join(b.TempDir(), "state"))
		if err != nil {
			b.Fatal(err)
		}
		run(b, s)
	})

	b.Run("gobreaker-distributed", func(b *testing.B) {
		cb := newGobreaker(b, nil)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Execute(func() (struct{}, error) { return struct{}{}, nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}

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
	rec := circuit.Admit(nil, "billing-api", benchPolicy, now, newID).Next
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
