//go:build unix

package storeurl_test

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/storeurl"
)

// startRedis starts a redis-server of the test's own on a unix socket and
// returns it, a client of it and its URL.
func startRedis(t *testing.T) (*exec.Cmd, *redis.Client, string) {
	t.Helper()
	cmd, sock := testenv.StartRedis(t)
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	t.Cleanup(func() { _ = c.Close() })
	return cmd, c, "unix://" + sock
}

var testPolicy = circuit.Policy{FailureThreshold: 3, Cooldown: time.Minute, ProbeLease: time.Second}

func succeed(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }

// evalshaCalls returns how many scripts the server has run.
func evalshaCalls(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:calls="); ok {
			v, _, _ := strings.Cut(rest, ",")
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// TestRedisCache opens a Redis store with local copies (the default) and
// with ?cache=off, and counts the scripts 1,000 healthy calls run on the
// server: with copies, none once the copy is read (a few allowed while the
// invalidation connection comes up); without, two per call.
func TestRedisCache(t *testing.T) {
	_, c, url := startRedis(t)
	tests := []struct {
		query    string
		min, max int
	}{
		{"", 0, 20},
		{"?cache=on", 0, 20},
		{"?cache=off", 2000, 2000},
	}
	for _, tt := range tests {
		name := tt.query
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s, err := storeurl.Open(ctx, url+tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			b := circuit.New(s)
			if err := b.Run(ctx, "billing-api", testPolicy, succeed); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // the invalidation connection comes up
			before := evalshaCalls(t, c)
			for range 1000 {
				if err := b.Run(ctx, "billing-api", testPolicy, succeed); err != nil {
					t.Fatal(err)
				}
			}
			n := evalshaCalls(t, c) - before
			t.Logf("%q: 1,000 healthy calls ran %d scripts on the server", tt.query, n)
			if n < tt.min || n > tt.max {
				t.Fatalf("%d scripts, want %d to %d", n, tt.min, tt.max)
			}
		})
	}
	if _, err := storeurl.Open(t.Context(), url+"?cache=maybe"); err == nil || !strings.Contains(err.Error(), `cache="maybe": want on or off`) {
		t.Fatalf("Open with cache=maybe: %v", err)
	}
}

// TestRedisContextBounds freezes the server (SIGSTOP): a call through a
// store that storeurl opened, under a 500 ms context, returns a StateError
// within about 500 ms, not after go-redis's read timeout and retries.
func TestRedisContextBounds(t *testing.T) {
	server, _, url := startRedis(t)
	s, err := storeurl.Open(t.Context(), url+"?cache=off")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := circuit.New(s)
	if err := b.Run(t.Context(), "billing-api", testPolicy, succeed); err != nil {
		t.Fatal(err)
	}
	if err := server.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = b.Run(ctx, "billing-api", testPolicy, succeed)
	d := time.Since(start)
	var se *circuit.StateError
	if !errors.As(err, &se) {
		t.Fatalf("Run with the server frozen = %v, want a StateError", err)
	}
	t.Logf("with the server frozen: StateError after %v", d.Round(time.Millisecond))
	if d > 800*time.Millisecond {
		t.Fatalf("Run took %v under a 500ms context", d)
	}
}
