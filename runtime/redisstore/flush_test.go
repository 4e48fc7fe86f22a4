package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TestFlushOutlivesDeadline checks that a window flush, a write, runs
// detached from the caller's cancellation: a call whose deadline falls
// while its flush waits on the server (here held by CLIENT PAUSE WRITE)
// still returns its own result, and its counts reach the server.
func TestFlushOutlivesDeadline(t *testing.T) {
	c := newClient(t, testenv.RedisURL(t))
	prefix := testPrefix(t, c)
	s := newCached(t, c, prefix)
	ctx := t.Context()
	const name = "billing-api"
	p := circuit.Policy{FailureRate: 0.5, MinCalls: 100, Window: time.Second, Cooldown: time.Minute, ProbeLease: time.Second}
	b := circuit.New(s)
	for i := 0; !s.Cached(name); i++ {
		if err := b.Run(ctx, name, p, op(circuit.Success)); err != nil || i > 10 {
			t.Fatalf("Run %d = %v, copy %v", i, err, s.Cached(name))
		}
	}
	time.Sleep(2 * p.Window / circuit.WindowBuckets) // the next call flushes
	if err := c.Do(ctx, "CLIENT", "PAUSE", 300, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	boom := errors.New("boom")
	err := b.Run(dctx, name, p, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, boom })
	if !errors.Is(err, boom) || errors.As(err, new(*circuit.StateError)) {
		t.Fatalf("Run whose deadline fell during its flush = %v, want its own error only", err)
	}
	rec, now, err := s.Load(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.ShareWindow(ctx, name, p.Window, circuit.WindowEpoch(rec), circuit.Bucket(now, p.Window), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.Failures != 1 {
		t.Errorf("server's window = %+v, want the failure flushed", n)
	}
}
