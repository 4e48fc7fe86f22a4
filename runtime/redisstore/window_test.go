package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// TestShareWindow checks the server side of the batched window: flushes
// add up, buckets that left the window drop out, a new epoch starts afresh,
// and a flush of an earlier generation is not counted.
func TestShareWindow(t *testing.T) {
	c := newClient(t, redisURL(t))
	s := redisstore.New(c, testPrefix(t, c))
	ctx := t.Context()
	const name, w = "billing-api", time.Minute
	const e1, e2 = 7<<32 | 1, 7<<32 | 2
	add := func(e uint64, b int64, bc ...circuit.BucketCounts) circuit.Counts {
		t.Helper()
		n, err := s.ShareWindow(ctx, name, w, e, b, bc)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	bc := func(b int64, calls, failures uint64) circuit.BucketCounts {
		return circuit.BucketCounts{Bucket: b, Counts: circuit.Counts{Calls: calls, Failures: failures}}
	}
	if got := add(e1, 100, bc(99, 3, 1), bc(100, 2, 2)); got != (circuit.Counts{Calls: 5, Failures: 3}) {
		t.Errorf("first flush = %+v", got)
	}
	if got := add(e1, 100, bc(100, 1, 0)); got != (circuit.Counts{Calls: 6, Failures: 3}) {
		t.Errorf("second flush = %+v", got)
	}
	if got := add(e1, 109, nil...); got != (circuit.Counts{Calls: 3, Failures: 2}) {
		t.Errorf("bucket 99 left the window: %+v, want bucket 100's", got)
	}
	if got := add(e2, 109, bc(109, 1, 0)); got != (circuit.Counts{Calls: 1}) {
		t.Errorf("a new generation = %+v, want its own call only", got)
	}
	if got := add(e1, 109, bc(109, 5, 5)); got != (circuit.Counts{Calls: 1}) {
		t.Errorf("a flush of the earlier generation = %+v, want it dropped", got)
	}
	if ttl, err := c.PTTL(ctx, s.WindowKey(name, w)).Result(); err != nil || ttl <= 0 || ttl > 2*w {
		t.Errorf("window key expiry = %v, %v; want within 2 windows", ttl, err)
	}
}

// TestBatchedRateRule opens a circuit on its failure rate through a Redis
// store: counts reach the server in batches, and an opening is made within
// 2×circuit.FlushEvery of the calls that justify it.
func TestBatchedRateRule(t *testing.T) {
	c := newClient(t, redisURL(t))
	s := redisstore.New(c, testPrefix(t, c))
	ctx := t.Context()
	p := circuit.Policy{FailureRate: 0.5, MinCalls: 4, Window: time.Minute, Cooldown: time.Minute, ProbeLease: time.Second}
	a, b := circuit.New(s), circuit.New(s) // two processes' Breakers
	boom := errors.New("boom")
	fail := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, boom }
	ok := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
	for _, br := range []*circuit.Breaker{a, b} {
		if err := br.Run(ctx, "billing-api", p, ok); err != nil {
			t.Fatal(err)
		}
		if err := br.Run(ctx, "billing-api", p, fail); !errors.Is(err, boom) {
			t.Fatal(err)
		}
	}
	justified := time.Now()
	for {
		err := b.Run(ctx, "billing-api", p, fail)
		if errors.Is(err, circuit.ErrOpen) {
			break
		}
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if snap, _ := b.Snapshot(ctx, "billing-api"); snap.State == circuit.StateOpen {
			break
		}
		if time.Since(justified) > 2*circuit.FlushEvery+time.Second {
			t.Fatalf("not open %v after 2 failures in 4 calls", time.Since(justified))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("opened %v after it was justified (bound: 2×FlushEvery = %v)", time.Since(justified), 2*circuit.FlushEvery)
}
