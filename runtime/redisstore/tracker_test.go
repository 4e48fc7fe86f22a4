package redisstore_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// TestCloseIsPrompt checks that closing a cached store does not wait out
// its stall bound: the invalidation connection's read ends when the store
// closes.
func TestCloseIsPrompt(t *testing.T) {
	c := newClient(t, redisURL(t))
	const bound = 5 * time.Second
	s := redisstore.NewCached(c, testPrefix(t, c), bound)
	waitFor(t, 5*time.Second, "the invalidation connection is up", s.Live)
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
		s := redisstore.NewCached(c, clusterPrefix(t, c), testStall)
		waitFor(t, 5*time.Second, "the invalidation connections are up", s.Live)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if i := strings.Index(stacks, "redisstore.watchMasters"); i >= 0 {
			t.Fatalf("a goroutine outlived Close:\n%s", stacks[max(0, i-500):min(len(stacks), i+500)])
		}
	}
}
