//go:build unix

package redisstore_test

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
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver/drivertest"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
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

// TestReplicaFailsClosed opens the store on a replica (what an application
// is left on when a failover did not move it), with and without copies.
// Reads work and writes fail with READONLY: the failure whose settlement
// is refused fails with a StateError after it ran, and every call after it
// fails closed without running. No loss is reported: the refused write
// changed nothing.
func TestReplicaFailsClosed(t *testing.T) {
	port := strconv.Itoa(freePorts(t, 1)[0])
	testenv.StartRedis(t, "--port", port, "--bind", "127.0.0.1")
	_, sock := testenv.StartRedis(t, "--replicaof", "127.0.0.1", port)
	replica := unixClient(t, sock)
	testenv.WaitFor(t, 10*time.Second, "the replica is in sync", func() bool {
		info, _ := replica.Info(t.Context(), "replication").Result()
		return strings.Contains(info, "master_link_status:up")
	})
	for _, cached := range []bool{false, true} {
		t.Run(map[bool]string{false: "CacheOff", true: "CacheOn"}[cached], func(t *testing.T) {
			var s circuit.Store
			if cached {
				s = newCached(t, replica, testPrefix(t, replica))
			} else {
				s = open(t, replica, redisstore.WithPrefix(testPrefix(t, replica)))
			}
			ev := &events{}
			b := circuit.New(s, circuit.WithObserver(ev))
			ran := 0
			for i := range 10 {
				err := b.Run(t.Context(), "billing-api", policy, func(context.Context) (circuit.Outcome, error) {
					ran++
					return circuit.Failure, errors.New("billing down")
				})
				var se *circuit.StateError
				if !errors.As(err, &se) || se.Ran != (i == 0) {
					t.Fatalf("call %d on a replica = %v, want a StateError (Ran only on the first)", i+1, err)
				}
				if i == 0 {
					t.Logf("refused settlement: %v", err)
				}
			}
			if ran != 1 {
				t.Fatalf("%d of 10 calls ran on a replica, want 1", ran)
			}
			if ev.has(driver.ErrLost) {
				t.Fatalf("a loss reported on a replica that refused every write: %v", ev.errs)
			}
		})
	}
}
