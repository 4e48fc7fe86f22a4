//go:build unix

package redisstore_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// TestMaxClients runs a cached store on a server at maxclients: the
// application's one pooled connection takes the only slot, so the server
// refuses the tracking connection (ERR max number of clients reached). The
// store has no copies and its calls read the server through the pool; once
// a slot frees up, a later session connects and the copies come back.
func TestMaxClients(t *testing.T) {
	_, sock := testenv.StartRedis(t, "--maxclients", "1")
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, ContextTimeoutEnabled: true, PoolSize: 1})
	t.Cleanup(func() { _ = c.Close() })
	h := &counter{}
	c.AddHook(h)
	s := open(t, c, redisstore.WithPrefix("maxclients:"), redisstore.WithCopies(testStall))
	b := circuit.New(s)
	ctx := t.Context()
	for range 3 * 1000 {
		if err := b.Run(ctx, "billing-api", policy, op(circuit.Success)); err != nil {
			t.Fatalf("Run at maxclients: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
	if s.Live() {
		t.Fatal("the tracking connection is up on a server at maxclients 1")
	}
	if got := len(h.take()); got < 3000 {
		t.Fatalf("%d commands for 3,000 calls without copies, want one each", got)
	}
	if err := c.ConfigSet(ctx, "maxclients", "10").Err(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the tracking connection is up once a slot is free", s.Live)
}
