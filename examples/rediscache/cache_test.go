//go:build unix

package rediscache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// TestGuardedRedisAgainstServer drives the guarded client against a real
// redis-server of its own, which it pauses: commands pass, a missing key is
// no failure, a server that stops answering opens the circuit, and a
// rejected command carries the *circuit.OpenError without reaching the
// server. The calls made while it is paused go through a second guarded
// client, on the same circuit, whose reads time out after 200ms; the
// others allow a loaded machine 5s.
func TestGuardedRedisAgainstServer(t *testing.T) {
	_, sock := testenv.StartRedis(t)
	client := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, MaxRetries: -1, ReadTimeout: 5 * time.Second})
	fast := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, MaxRetries: -1, ReadTimeout: 200 * time.Millisecond})
	admin := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	t.Cleanup(func() { admin.Close(); fast.Close() })
	store, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(store)
	cache, paused := NewGuardedCache(client, b), NewGuardedCache(fast, b)
	ctx := context.Background()

	key := "rediscache-test:" + t.Name()
	if err := cache.Set(ctx, key, "v", time.Minute).Err(); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if v, err := cache.Get(ctx, key).Result(); err != nil || v != "v" {
		t.Fatalf("Get = %q, %v; want v", v, err)
	}
	for range 5 {
		if err := cache.Get(ctx, key+":missing").Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("Get of a missing key: %v, want redis.Nil", err)
		}
	}
	if s := snapshot(t, b); s != "closed" {
		t.Fatalf("after missing keys the circuit is %s, want closed: redis.Nil is no failure", s)
	}

	// The server stops answering: three timeouts open the circuit.
	if err := admin.Do(ctx, "CLIENT", "PAUSE", "1500", "ALL").Err(); err != nil {
		t.Fatalf("CLIENT PAUSE: %v", err)
	}
	for i := range 3 {
		err := paused.Get(ctx, key).Err()
		var open *circuit.OpenError
		if err == nil || errors.As(err, &open) {
			t.Fatalf("call %d while paused: %v, want a timeout", i, err)
		}
	}
	start := time.Now()
	cmd := paused.Get(ctx, key)
	var open *circuit.OpenError
	if !errors.As(cmd.Err(), &open) {
		t.Fatalf("Get after three timeouts: %v, want *circuit.OpenError", cmd.Err())
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("a rejected Get took %v: it should not reach the paused server", d)
	}
	if s := snapshot(t, b); s != "open" {
		t.Fatalf("circuit is %s, want open", s)
	}

	// The pause ends and the cooldown passes: the probe closes it.
	time.Sleep(1600 * time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := cache.Get(ctx, key).Result()
		if err == nil && v == "v" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Get after the pause: %q, %v", v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := snapshot(t, b); s != "closed" {
		t.Fatalf("after a successful probe the circuit is %s, want closed", s)
	}
	if err := cache.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func snapshot(t *testing.T, b *circuit.Breaker) string {
	t.Helper()
	s, err := b.Snapshot(context.Background(), "cache")
	if err != nil {
		t.Fatal(err)
	}
	return s.State.String()
}
