package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// TestWindowKeyExpires checks that a window's key on the server expires
// within two windows of its last flush (drivertest.Run checks the counts).
func TestWindowKeyExpires(t *testing.T) {
	c := newClient(t, testenv.RedisURL(t))
	s := open(t, c, redisstore.WithPrefix(testPrefix(t, c)))
	ctx := t.Context()
	const name, w = "billing-api", time.Minute
	add := []driver.BucketCounts{{Bucket: 100, Counts: driver.Counts{Calls: 1}}}
	if _, err := s.ShareWindow(ctx, name, w, 7<<32|1, 100, add); err != nil {
		t.Fatal(err)
	}
	if ttl, err := c.PTTL(ctx, s.WindowKey(name, w)).Result(); err != nil || ttl <= 0 || ttl > 2*w {
		t.Errorf("window key expiry = %v, %v; want within 2 windows", ttl, err)
	}
}

// TestBatchedRateRule opens a circuit on its failure rate through a Redis
// store: counts reach the server in batches, and an opening is made within
// 2×driver.FlushEvery of the calls that justify it.
func TestBatchedRateRule(t *testing.T) {
	c := newClient(t, testenv.RedisURL(t))
	s := open(t, c, redisstore.WithPrefix(testPrefix(t, c)))
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
		if time.Since(justified) > 2*driver.FlushEvery+time.Second {
			t.Fatalf("not open %v after 2 failures in 4 calls", time.Since(justified))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("opened %v after it was justified (bound: 2×FlushEvery = %v)", time.Since(justified), 2*driver.FlushEvery)
}
