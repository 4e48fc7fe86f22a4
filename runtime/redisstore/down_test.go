//go:build unix

package redisstore_test

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver/drivertest"
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
// commands time out) while a call runs: its settlement fails with a
// StateError (after the operation ran), and every later call fails closed
// with a StateError without running (drivertest.Outage).
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
	b := circuit.New(open(t, c))
	ctx := t.Context()
	const name = "billing-api"
	if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil {
		t.Fatalf("Run with the server up: %v", err)
	}

	drivertest.Outage(t, b, name, t.Context, func() { stop(server) })
}
