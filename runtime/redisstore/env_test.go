package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// newClient returns a client of url, closed when the test ends.
func newClient(t testing.TB, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	opt.ContextTimeoutEnabled = true
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("ping %s: %v", url, err)
	}
	return c
}

// testPrefix returns a key prefix of its own for one test, whose keys are
// removed when the test ends.
func testPrefix(t testing.TB, c *redis.Client) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	prefix := "circuitgen-test:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := c.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	return prefix
}

// open returns a store on c made with opts, closed when the test ends.
func open(t testing.TB, c redis.UniversalClient, opts ...redisstore.Option) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(context.Background(), c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newStore returns a store on the test server with a prefix of its own.
func newStore(t testing.TB) (*redisstore.Store, *redis.Client) {
	t.Helper()
	c := newClient(t, testenv.RedisURL(t))
	return open(t, c, redisstore.WithPrefix(testPrefix(t, c))), c
}

// testStall is the stall bound of the tests' cached stores: short, so that
// tests of a frozen server end soon.
const testStall = 400 * time.Millisecond

// newCached returns a cached store on c under prefix, closed when the test
// ends, once its invalidation connection is up.
func newCached(t testing.TB, c redis.UniversalClient, prefix string) *redisstore.Store {
	t.Helper()
	s := open(t, c, redisstore.WithPrefix(prefix), redisstore.WithCopies(testStall))
	testenv.WaitFor(t, testenv.LiveWithin, "the invalidation connection is up", s.Live)
	return s
}

// counter is a go-redis hook that counts commands, each one round trip.
type counter struct {
	mu    sync.Mutex
	names []string
}

func (h *counter) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts cmd, unless it sets up a new connection: the pool
// dials one when another command holds the last (the store's ROLE, each
// bound), and its setup is the pool's, not a call's.
func (h *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !setup(cmd) {
			h.mu.Lock()
			h.names = append(h.names, cmd.Name())
			h.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts a pipeline, unless it sets up a new connection.
func (h *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return !setup(c) }) {
			return next(ctx, cmds)
		}
		h.mu.Lock()
		h.names = append(h.names, "pipeline")
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// setup reports whether cmd is one go-redis sends on a new connection:
// HELLO, CLIENT SETINFO, CLIENT MAINT_NOTIFICATIONS.
func setup(cmd redis.Cmder) bool {
	args := cmd.Args()
	if cmd.Name() == "hello" {
		return true
	}
	sub, _ := args[min(1, len(args)-1)].(string)
	return cmd.Name() == "client" && (strings.EqualFold(sub, "setinfo") || strings.EqualFold(sub, "maint_notifications"))
}

// take returns the commands counted since the last take.
func (h *counter) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.names
	h.names = nil
	return n
}
