package redisstore_test

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// TestCloseIsPrompt checks that closing a cached store does not wait out
// its stall bound: the invalidation connection's read ends when the store
// closes.
func TestCloseIsPrompt(t *testing.T) {
	c := newClient(t, testenv.RedisURL(t))
	const bound = 5 * time.Second
	s := open(t, c, redisstore.WithPrefix(testPrefix(t, c)), redisstore.WithCopies(bound))
	testenv.WaitFor(t, testenv.LiveWithin, "the invalidation connection is up", s.Live)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > bound/2 {
		t.Errorf("Close took %v, want well under the stall bound %v", d, bound)
	}
}

// TestCloseEndsTracking checks that no goroutine of a cached store on a
// cluster (its readers, heartbeats and the watch of the cluster's masters)
// outlives Close, where one would mark a later session's copies down.
func TestCloseEndsTracking(t *testing.T) {
	c := newClusterClient(t)
	for range 20 {
		s := open(t, c, redisstore.WithPrefix(clusterPrefix(t, c)), redisstore.WithCopies(testStall))
		testenv.WaitFor(t, testenv.LiveWithin, "the invalidation connections are up", s.Live)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if i := strings.Index(stacks, "redisstore.watchServers"); i >= 0 {
			t.Fatalf("a goroutine outlived Close:\n%s", stacks[max(0, i-500):min(len(stacks), i+500)])
		}
	}
}

// TestRefusedTrackingBacksOff checks that an invalidation connection the
// server refuses for good (an ACL that forbids CLIENT TRACKING) is retried
// ever less often, not every quarter of the stall bound.
func TestRefusedTrackingBacksOff(t *testing.T) {
	admin := newClient(t, testenv.RedisURL(t))
	user := "circuitgen-test-" + driver.NewID()[:8]
	ctx := t.Context()
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">secret", "~*", "&*", "+@all", "-client|tracking").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", user) })
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	opt.Username, opt.Password, opt.ContextTimeoutEnabled = user, "secret", true
	var dials atomic.Int32
	dial := redis.NewDialer(opt)
	opt.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	s := open(t, c, redisstore.WithPrefix(testPrefix(t, admin)), redisstore.WithCopies(testStall))
	defer s.Close()
	const d = 2 * time.Second // 20 pauses of testStall/4 without backing off
	time.Sleep(d)
	if s.Live() {
		t.Fatal("tracking is live despite the ACL")
	}
	// Pauses of 100, 200, 400, 800 ms... fit 4 sessions in 2 s.
	if n := dials.Load(); n > 6 {
		t.Errorf("%d sessions in %v, want them backing off (at most 6)", n, d)
	}
}
