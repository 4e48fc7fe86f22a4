package bench

// Redis rows: circuitgen's Redis store, with and without copies, beside
// the file store and gobreaker's DistributedCircuitBreaker over a go-redis
// SharedDataStore on the same server (redis_gobreaker_test.go).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

var redisPolicy = circuit.Policy{FailureThreshold: 5, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

// redisClient returns a client of the test server, closed when the test
// ends.
func redisClient(tb testing.TB) *redis.Client {
	tb.Helper()
	opt, err := redis.ParseURL(testenv.RedisURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	opt.ContextTimeoutEnabled = true
	c := redis.NewClient(opt)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// redisPrefix returns a key prefix of the test's own, whose keys are
// removed when it ends.
func redisPrefix(tb testing.TB, c *redis.Client) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	prefix := "circuitgen-bench:" + hex.EncodeToString(b[:]) + ":"
	tb.Cleanup(func() {
		ctx := context.Background()
		if keys, _ := c.Keys(ctx, prefix+"*").Result(); len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	return prefix
}

// commands is a go-redis hook that records the commands sent, each one
// round trip.
type commands struct {
	mu    sync.Mutex
	names []string
}

func (h *commands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		h.names = append(h.names, cmd.Name())
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// take returns the commands recorded since the last take.
func (h *commands) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.names
	h.names = nil
	return n
}

// newGobreakerRedis returns a gobreaker DistributedCircuitBreaker on the test
// server, with a circuit name of its own, its commands recorded by h when
// h is not nil.
func newGobreakerRedis(tb testing.TB, h *commands) *gobreaker.DistributedCircuitBreaker[struct{}] {
	tb.Helper()
	c := redisClient(tb)
	if h != nil {
		c.AddHook(h)
	}
	name := redisPrefix(tb, c) + "gobreaker"
	tb.Cleanup(func() {
		c.Del(context.Background(), "gobreaker:mutex:"+name, "gobreaker:state:"+name)
	})
	cb, err := gobreaker.NewDistributedCircuitBreaker[struct{}](newGobreakerStore(c), gobreaker.Settings{
		Name:        name,
		Timeout:     redisPolicy.Cooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= uint32(redisPolicy.FailureThreshold) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	return cb
}

// TestGobreakerRoundTrips counts what a healthy call costs gobreaker's
// DistributedCircuitBreaker: GET, SET NX PX (lock), SET, unlock script,
// with the lock held across the call.
func TestGobreakerRoundTrips(t *testing.T) {
	h := &commands{}
	cb := newGobreakerRedis(t, h)
	ok := func() (struct{}, error) { return struct{}{}, nil }
	if _, err := cb.Execute(ok); err != nil {
		t.Fatal(err)
	}
	h.take()
	if _, err := cb.Execute(ok); err != nil {
		t.Fatal(err)
	}
	got := h.take()
	t.Logf("gobreaker distributed, healthy call: %d round trips %v", len(got), got)
	if want := []string{"get", "set", "set", "evalsha"}; !slices.Equal(got, want) {
		t.Errorf("commands %v, want GET, SET NX, SET and the unlock script", got)
	}
}

// BenchmarkRedisGuardedCall measures one healthy guarded call (closed
// circuit, the operation succeeds at once) on loopback against the test
// server: circuitgen's Breaker on the Redis store without copies and with
// them, the same call on the file store, and gobreaker's
// DistributedCircuitBreaker.
func BenchmarkRedisGuardedCall(b *testing.B) {
	run := func(b *testing.B, s circuit.Store) {
		br := circuit.New(s)
		ctx := context.Background()
		for range 2 {
			if err := br.Run(ctx, "billing-api", redisPolicy, succeedOp); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := br.Run(ctx, "billing-api", redisPolicy, succeedOp); err != nil {
				b.Fatal(err)
			}
		}
	}
	open := func(b *testing.B, opts ...redisstore.Option) *redisstore.Store {
		c := redisClient(b)
		s, err := redisstore.New(context.Background(), c, append([]redisstore.Option{redisstore.WithPrefix(redisPrefix(b, c))}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	}
	b.Run("impl=circuitgen-redis", func(b *testing.B) { run(b, open(b)) })
	b.Run("impl=circuitgen-redis-copies", func(b *testing.B) {
		s := open(b, redisstore.WithCopies(0))
		time.Sleep(time.Second) // the invalidation connection comes up; until then there are no copies
		run(b, s)
	})
	b.Run("impl=circuitgen-filestore", func(b *testing.B) {
		s, err := filestore.Open(filepath.Join(b.TempDir(), "state"))
		if err != nil {
			b.Fatal(err)
		}
		run(b, s)
	})
	b.Run("impl=gobreaker-distributed", func(b *testing.B) {
		cb := newGobreakerRedis(b, nil)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Execute(func() (struct{}, error) { return struct{}{}, nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// succeedOp is an operation that succeeds at once.
func succeedOp(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
