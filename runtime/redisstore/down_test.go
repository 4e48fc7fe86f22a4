//go:build unix

package redisstore_test

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/redis/go-redis/v9"
)

// throwawayRedis starts a redis-server of its own on a unix socket, for a
// test that stops it. It returns the server and a client of it with short
// timeouts.
func throwawayRedis(t *testing.T) (*exec.Cmd, *redis.Client) {
	t.Helper()
	cmd, sock := testenv.StartRedis(t)
	c := redis.NewClient(&redis.Options{
		Network: "unix", Addr: sock,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
		MaxRetries: 1,
	})
	t.Cleanup(func() { _ = c.Close() })
	return cmd, c
}

// TestServerStopped stops the Redis server (kills it, or freezes it so that
// commands time out) while a call runs: its
// settlement fails with a StateError (after the operation ran), and every
// later call fails closed with a StateError without running.
func TestServerStopped(t *testing.T) {
	tests := []struct {
		name string
		stop func(*exec.Cmd)
	}{
		{"Killed", func(server *exec.Cmd) {
			_ = server.Process.Kill()
			_ = server.Wait()
		}},
		{"Hung", func(server *exec.Cmd) { _ = server.Process.Signal(syscall.SIGSTOP) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { testServerStopped(t, tt.stop) })
	}
}

func testServerStopped(t *testing.T, stop func(*exec.Cmd)) {
	server, c := throwawayRedis(t)
	b := circuit.New(redisstore.New(c, redisstore.DefaultPrefix))
	ctx := t.Context()
	const name = "billing-api"
	if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil {
		t.Fatalf("Run with the server up: %v", err)
	}

	err := b.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) {
		stop(server)
		return circuit.Failure, errDown
	})
	var se *circuit.StateError
	if !errors.As(err, &se) || !se.Ran || !errors.Is(err, errDown) {
		t.Fatalf("Run whose settlement meets a stopped server = %v, want a StateError after the call, wrapping its error", err)
	}

	calls := 0
	for i := range 5 {
		start := time.Now()
		err := b.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) {
			calls++
			return circuit.Success, nil
		})
		if !errors.As(err, &se) || se.Ran {
			t.Fatalf("call %d with the server stopped = %v, want a StateError before the call", i, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("call %d took %v to fail", i, d)
		}
		if i == 0 {
			t.Logf("with the server stopped: %v (in %v)", err, time.Since(start).Round(time.Millisecond))
		}
	}
	if calls != 0 {
		t.Fatalf("%d calls admitted with the server stopped, want 0", calls)
	}
}
