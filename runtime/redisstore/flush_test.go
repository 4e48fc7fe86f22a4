package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
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
	boom := errors.New("boom")
	// The call must be admitted from its copy: a paused server cannot run
	// the load. A copy dropped meanwhile (a stall of the invalidation
	// connection on a loaded machine) fails the load, not the flush: the
	// attempt is made again.
	for attempt := 1; ; attempt++ {
		warm(t, s, b, name, p)
		time.Sleep(2 * p.Window / driver.WindowBuckets) // the next call flushes
		if err := c.Do(ctx, "CLIENT", "PAUSE", 300, "WRITE").Err(); err != nil {
			t.Fatal(err)
		}
		dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err := b.Run(dctx, name, p, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, boom })
		cancel()
		if se, ok := errors.AsType[*circuit.StateError](err); ok && se.Op == "load" && !se.Ran && attempt < 5 {
			t.Logf("attempt %d: the copy was gone, the load waited on the paused server: %v", attempt, err)
			time.Sleep(400 * time.Millisecond) // the pause ends
			continue
		}
		if !errors.Is(err, boom) || errors.As(err, new(*circuit.StateError)) {
			t.Fatalf("Run whose deadline fell during its flush = %v, want its own error only", err)
		}
		break
	}
	rec, now, err := s.Load(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.ShareWindow(ctx, name, p.Window, driver.WindowEpoch(rec), driver.Bucket(now, p.Window), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.Failures != 1 {
		t.Errorf("server's window = %+v, want the failure flushed", n)
	}
}
