//go:build unix

package redisstore_test

import (
	"errors"
	"fmt"
	"os/exec"
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

// TestReplicaRefused opens a store on a replica (one whose link to its
// master is cut keeps serving what it last replicated, so a process on it
// would admit calls into circuits opened on the master): New fails with an
// error wrapping ErrReplica, from ROLE or, where ROLE is renamed away,
// INFO replication. A server that answers neither is reported as unsafe.
func TestReplicaRefused(t *testing.T) {
	replica := []string{"--replicaof", "127.0.0.1", "1"}
	for _, tt := range []struct {
		name   string
		extra  []string
		refuse bool
	}{
		{"Replica", replica, true},
		{"ReplicaWithoutROLE", append([]string{"--rename-command", "ROLE", ""}, replica...), true},
		{"MasterWithoutROLEOrINFO", []string{"--rename-command", "ROLE", "", "--rename-command", "INFO", ""}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, sock := testenv.StartRedis(t, tt.extra...)
			s, err := redisstore.New(t.Context(), unixClient(t, sock))
			if tt.refuse {
				if !errors.Is(err, redisstore.ErrReplica) {
					t.Fatalf("New on a replica = %v, want an error wrapping ErrReplica", err)
				}
				t.Logf("%v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ev := &events{}
			circuit.New(s, circuit.WithObserver(ev))
			if len(ev.errs) != 1 || !errors.Is(ev.errs[0], driver.ErrUnsafe) || !strings.Contains(ev.errs[0].Error(), "role") {
				t.Fatalf("events %v, want one ErrUnsafe naming the role", ev.errs)
			}
		})
	}
}

// TestDemotedServer turns the store's server into a replica whose link is
// cut (a failover's demotion, as REPLICAOF does it) while a circuit is
// closed, with and without copies: no call that begins later than the
// stall bound (with copies) or RoleEvery (without) after the demotion is
// admitted, nor any after the first refused, and the calls fail with
// StateErrors wrapping ErrReplica.
func TestDemotedServer(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(map[bool]string{false: "CacheOff", true: "CacheOn"}[cached], func(t *testing.T) {
			const name = "billing-api"
			_, c, _, b := closedOnOwnServer(t, cached, name)
			if err := c.Do(t.Context(), "REPLICAOF", "127.0.0.1", "1").Err(); err != nil {
				t.Fatal(err)
			}
			bound := redisstore.RoleEvery // a read checks the role
			if cached {
				bound = 2 * testStall // a ROLE each stall bound does
			}
			demoted := time.Now()
			var refused time.Time
			for refused.IsZero() || time.Since(refused) < 100*time.Millisecond {
				if time.Since(demoted) > bound+time.Second {
					t.Fatalf("no call refused within %v of the demotion", time.Since(demoted))
				}
				began := time.Now()
				err := b.Run(t.Context(), name, policy, op(circuit.Success))
				var se *circuit.StateError
				switch {
				case err == nil && (began.Sub(demoted) > bound || !refused.IsZero()):
					t.Fatalf("a call begun %v after the demotion was admitted", began.Sub(demoted))
				case errors.As(err, &se) && errors.Is(err, redisstore.ErrReplica):
					if refused.IsZero() {
						refused = time.Now()
						t.Logf("refused %v after the demotion: %v", refused.Sub(demoted), err)
					}
				case err != nil:
					t.Fatalf("a call on a demoted server: %v, want a StateError wrapping ErrReplica", err)
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
}

// TestDemotedRingShard demotes one shard of a Ring of two masters: every
// read of a circuit on it is refused from the first on, and a circuit on
// the other shard is still served. One flag or one check a second for the
// whole store would let reads of the demoted shard through between checks.
func TestDemotedRingShard(t *testing.T) {
	_, sa := testenv.StartRedis(t)
	_, sb := testenv.StartRedis(t)
	ring := redis.NewRing(&redis.RingOptions{
		Addrs:                 map[string]string{"a": sa, "b": sb},
		ContextTimeoutEnabled: true,
		NewClient: func(o *redis.Options) *redis.Client {
			o.Network = "unix"
			return redis.NewClient(o)
		},
	})
	t.Cleanup(func() { _ = ring.Close() })
	ca, cb := unixClient(t, sa), unixClient(t, sb)
	s := open(t, ring)
	b := circuit.New(s)
	ctx := t.Context()
	on := map[*redis.Client]string{} // a circuit whose record is on each shard
	for i := 0; len(on) < 2 && i < 200; i++ {
		name := fmt.Sprintf("svc-%d", i)
		if err := b.ForceClosed(ctx, name, time.Second); err != nil { // writes a record
			t.Fatal(err)
		}
		for _, c := range []*redis.Client{ca, cb} {
			if n, _ := c.Exists(ctx, s.Key(name)).Result(); n == 1 && on[c] == "" {
				on[c] = name
			}
		}
	}
	if on[ca] == "" || on[cb] == "" {
		t.Fatal("no circuit on each shard")
	}
	if err := cb.Do(ctx, "REPLICAOF", "127.0.0.1", "1").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := b.Run(ctx, on[cb], policy, op(circuit.Success)); !errors.Is(err, redisstore.ErrReplica) {
			t.Fatalf("call %d on the demoted shard: %v, want a StateError wrapping ErrReplica", i, err)
		}
		if err := b.Run(ctx, on[ca], policy, op(circuit.Success)); err != nil {
			t.Fatalf("call %d on the master: %v", i, err)
		}
	}
}
