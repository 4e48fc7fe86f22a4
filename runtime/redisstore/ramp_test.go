package redisstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/faultproxy"
	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/redis/go-redis/v9"
)

// proxied returns a client of the test server through a fault proxy, and
// the proxy.
func proxied(t *testing.T) (*redis.Client, *faultproxy.Proxy) {
	t.Helper()
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.Listen(opt.Network, opt.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	opt.Network, opt.Addr, opt.ContextTimeoutEnabled = "tcp", p.Addr(), true
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c, p
}

// TestDelayRampEndsCopies puts a link whose delay grows step by step
// between a cached store and the server: the invalidation connection never
// goes silent for the stall bound, but its answers come ever later. An
// opening made by another client while the delay is beyond the bound must
// end the copies within the bound: no call begun later than the stall
// bound after the opening's write returned is admitted.
func TestDelayRampEndsCopies(t *testing.T) {
	c, proxy := proxied(t)
	direct := newClient(t, testenv.RedisURL(t))
	prefix := testPrefix(t, direct)
	s := newCached(t, c, prefix)
	b := circuit.New(s)
	const name = "billing-api"
	warm(t, s, b, name, policy)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var a testenv.Admissions
	wg.Add(1)
	go func() {
		defer wg.Done()
		testenv.CallLoop(ctx, b, name, policy, &a)
	}()
	// The delay grows by 3/4 of the stall bound each second, in steps of
	// a tenth of a second, up to four stall bounds.
	step, every := testStall*3/40, 100*time.Millisecond
	proxy.Ramp(step, every, 2*testStall)
	opener := circuit.New(open(t, direct, redisstore.WithPrefix(prefix)))
	if err := opener.ForceOpen(t.Context(), name, time.Minute); err != nil {
		t.Fatal(err)
	}
	opened := time.Now()
	proxy.Ramp(step, every, 4*testStall)
	time.Sleep(2 * testStall)
	final := proxy.Delay()
	cancel()
	proxy.SetDelay(0)
	wg.Wait()
	n, last := a.Late(opened, testStall)
	t.Logf("delay %v at the opening, %v at the end; %d calls admitted later than the stall bound %v after it; the last admitted began %v after it",
		2*testStall, final, n, testStall, last.Round(time.Millisecond))
	if n > 0 {
		t.Errorf("%d calls admitted more than the stall bound after the opening", n)
	}
}
