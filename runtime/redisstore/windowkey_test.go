package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// TestFlushNotBroadcast checks that a window flush sends no invalidation
// to the processes that track the store's records: its key lies under the
// store's prefix but outside every prefix they track, or every flush would
// reach every process of the fleet. A record's change, for contrast,
// reaches them.
func TestFlushNotBroadcast(t *testing.T) {
	s, c := newStore(t)
	ctx := t.Context()
	const name = "billing-api"
	for _, prefix := range []string{redisstore.DefaultPrefix, "", "c", "w"} {
		k := open(t, c, redisstore.WithPrefix(prefix)).WindowKey(name, time.Minute)
		if !strings.HasPrefix(k, prefix) {
			t.Errorf("window key %s is not under its store's prefix %q", k, prefix)
		}
		for _, p := range redisstore.TrackedPrefixes(prefix) {
			if strings.HasPrefix(k, p) {
				t.Errorf("window key %s is under the tracked prefix %q", k, p)
			}
		}
	}
	// A connection of the test's own that tracks the store's records, as a
	// cached store's does.
	opt := *c.Options()
	opt.Protocol, opt.PoolSize, opt.ClientName = 2, 1, "circuitgen-test-tracker"
	sub := redis.NewClient(&opt)
	defer sub.Close()
	ps := sub.Subscribe(ctx, "__redis__:invalidate")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	id := trackerID(t, c, opt.ClientName)
	conn := c.Conn()
	defer conn.Close()
	prefix := strings.TrimSuffix(s.Key(name), circuit.Key(name))
	args := []any{"CLIENT", "TRACKING", "ON", "REDIRECT", id, "BCAST"}
	for _, p := range redisstore.TrackedPrefixes(prefix) {
		args = append(args, "PREFIX", p)
	}
	if err := conn.Do(ctx, args...).Err(); err != nil {
		t.Fatal(err)
	}
	e := uint64(7<<32 | 1)
	if _, err := s.ShareWindow(ctx, name, time.Minute, e, 100, []driver.BucketCounts{{Bucket: 100, Counts: driver.Counts{Calls: 1}}}); err != nil {
		t.Fatal(err)
	}
	if msg, err := ps.ReceiveTimeout(ctx, 200*time.Millisecond); err == nil {
		t.Errorf("a flush sent %v to the processes that track the prefix", msg)
	}
	if err := c.Set(ctx, s.Key(name), "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.ReceiveTimeout(ctx, 2*time.Second); err != nil {
		t.Errorf("a change of the record sent no invalidation: %v (the test's tracking is broken)", err)
	}
}

// trackerID returns the id of the one connection named name.
func trackerID(t *testing.T, c *redis.Client, name string) string {
	t.Helper()
	list, err := c.ClientList(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(list, "\n") {
		if strings.Contains(line, " name="+name+" ") {
			return strings.TrimPrefix(strings.Fields(line)[0], "id=")
		}
	}
	t.Fatalf("no connection named %s in %s", name, list)
	return ""
}

// TestWindowKeyUnderPrefix runs a cached store's rate rule as a user whose
// ACL allows only the keys under the store's prefix: the window counts
// are flushed (no NOPERM) and the invalidation connection goes live.
func TestWindowKeyUnderPrefix(t *testing.T) {
	admin := newClient(t, testenv.RedisURL(t))
	prefix := testPrefix(t, admin)
	user := "circuitgen-test-" + strings.Trim(prefix[len("circuitgen-test:"):], ":")
	ctx := t.Context()
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">secret", "~"+prefix+"*", "allchannels", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", user) })
	opt := *admin.Options()
	opt.Username, opt.Password = user, "secret"
	c := redis.NewClient(&opt)
	t.Cleanup(func() { _ = c.Close() })
	s := newCached(t, c, prefix)
	add := []driver.BucketCounts{{Bucket: 100, Counts: driver.Counts{Calls: 1, Failures: 1}}}
	if _, err := s.ShareWindow(ctx, "billing-api", time.Minute, 7<<32|1, 100, add); err != nil {
		t.Fatalf("a flush as a user of the prefix's keys only: %v", err)
	}
}
