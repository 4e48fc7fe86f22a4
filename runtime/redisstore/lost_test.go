//go:build unix

package redisstore_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// events is an Observer (with ObserveEvent) that keeps the store's reports.
type events struct {
	mu   sync.Mutex
	errs []error
}

func (e *events) ObserveTransition(circuit.Transition) {}

func (e *events) ObserveEvent(ev circuit.Event) {
	e.mu.Lock()
	e.errs = append(e.errs, ev.Err)
	e.mu.Unlock()
}

// has reports whether an event's error matches target.
func (e *events) has(target error) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, err := range e.errs {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// TestLostDatasetFailsClosed opens a circuit for a minute, then has the
// server lose it: restarted without persistence, flushed, the key gone (as
// an allkeys-* eviction takes it), or the record rolled back to the closed
// one it held before (as a restore from a backup does), of the circuit's
// incarnation or of one a Clear ended before the circuit opened. The store
// must not take the lost record for a closed circuit: eight callers at
// once get one probe, and
// the others are rejected until it succeeds; the loss is reported as an
// event wrapping driver.ErrLost. With persistence, a restart loses
// nothing: the circuit stays open.
func TestLostDatasetFailsClosed(t *testing.T) {
	for _, tt := range []struct {
		name    string
		persist bool
		lose    func(t *testing.T, srv *server)
		cleared bool // the circuit is cleared after its closed record is taken, and made anew
	}{
		{"RestartWithoutPersistence", false, func(t *testing.T, srv *server) { srv.restart(t) }, false},
		{"FlushAll", true, func(t *testing.T, srv *server) { srv.do(t, "FLUSHALL") }, false},
		{"KeyEvicted", true, func(t *testing.T, srv *server) { srv.do(t, "DEL", srv.key) }, false},
		{"RolledBack", true, func(t *testing.T, srv *server) { srv.do(t, "SET", srv.key, srv.closed) }, false},
		{"RolledBackToClearedIncarnation", true, func(t *testing.T, srv *server) { srv.do(t, "SET", srv.key, srv.closed) }, true},
		{"RestartWithPersistence", true, func(t *testing.T, srv *server) { srv.restart(t) }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, tt.persist)
			c := unixClient(t, srv.sock)
			s := open(t, c, redisstore.WithCopies(testStall))
			ev := &events{}
			b := circuit.New(s, circuit.WithObserver(ev))
			const name = "billing-api"
			srv.key = s.Key(name)
			ctx := t.Context()
			if err := b.Clear(ctx, name); err != nil { // a closed record: a healthy call writes none
				t.Fatal(err)
			}
			for range 3 {
				_ = b.Run(ctx, name, policy, op(circuit.Success))
			}
			closed, err := c.Get(ctx, srv.key).Result()
			if err != nil {
				t.Fatal(err)
			}
			srv.closed = closed // the closed record, as a backup holds it
			if tt.cleared {
				if err := b.Clear(ctx, name); err != nil {
					t.Fatal(err)
				}
				if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil { // a record of another incarnation
					t.Fatal(err)
				}
			}
			if err := b.ForceOpen(ctx, name, time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := b.Run(ctx, name, policy, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
				t.Fatalf("Run on the open circuit = %v", err)
			}
			tt.lose(t, srv)
			if tt.name == "RestartWithPersistence" {
				_ = b.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) {
					t.Error("a call admitted on a circuit a persisted restart kept open")
					return circuit.Success, nil
				})
				if ev.has(driver.ErrLost) {
					t.Error("a persisted restart reported a loss")
				}
				return
			}
			testenv.RequireOneProbe(t, b, name, policy)
			if !ev.has(driver.ErrLost) {
				t.Error("the loss was not reported as an event wrapping driver.ErrLost")
			}
		})
	}
}

// server is a redis-server of the test's own that can be restarted on the
// same files.
type server struct {
	cmd       *exec.Cmd
	dir, sock string
	extra     []string
	key       string
	closed    string // the circuit's closed record, before it opened
}

// startServer starts a server, persisting every write before its reply
// (appendfsync always) or nothing. Under everysec a write is put off while
// a slow fsync runs, and its reply is sent anyway: a SIGKILL then loses it
// (it did once in CI, and the store rightly reported the loss).
func startServer(t *testing.T, persist bool) *server {
	srv := &server{dir: t.TempDir(), extra: []string{"--appendfsync", "always"}}
	if !persist {
		srv.extra = []string{"--appendonly", "no"}
	}
	srv.cmd, srv.sock = testenv.StartRedisIn(t, srv.dir, srv.extra...)
	return srv
}

// restart kills the server (SIGKILL: no final save) and starts it again on
// the same files.
func (srv *server) restart(t *testing.T) {
	t.Helper()
	_ = srv.cmd.Process.Kill()
	_ = srv.cmd.Wait()
	srv.cmd, _ = testenv.StartRedisIn(t, srv.dir, srv.extra...)
}

// do runs a command on the server.
func (srv *server) do(t *testing.T, args ...any) {
	t.Helper()
	if err := unixClient(t, filepath.Clean(srv.sock)).Do(t.Context(), args...).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestExpiredTombstoneNotLost: a Delete's tombstone (what a Clear of a
// corrupt record leaves) expires, a day later; a process that last found
// the tombstone, and then no key, was told of a Clear, not of a loss: the
// circuit is closed and nothing is reported.
func TestExpiredTombstoneNotLost(t *testing.T) {
	srv := startServer(t, true)
	c := unixClient(t, srv.sock)
	s := open(t, c)
	ev := &events{}
	b := circuit.New(s, circuit.WithObserver(ev))
	const name = "billing-api"
	ctx := t.Context()
	if err := b.Clear(ctx, name); err != nil { // a record
		t.Fatal(err)
	}
	if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, name); err != nil { // a tombstone, as a Clear of a corrupt record leaves
		t.Fatal(err)
	}
	if _, err := b.Snapshot(ctx, name); err != nil { // this process last found the tombstone
		t.Fatal(err)
	}
	srv.do(t, "DEL", s.Key(name)) // what the tombstone's expiry does
	requireNotLost(t, b, ev, name)
}

// TestFlushAllDropsCopies: a FLUSHALL while a process serves a circuit from
// its copy. The server tells every tracking connection of the flush; the
// store must drop its copies, not keep admitting calls on a record the
// server no longer has: the next call finds the record lost, reports it,
// and is the circuit's probe.
func TestFlushAllDropsCopies(t *testing.T) {
	srv := startServer(t, true)
	s := open(t, unixClient(t, srv.sock), redisstore.WithCopies(testStall))
	ev := &transitions{}
	b := circuit.New(s, circuit.WithObserver(ev))
	const name = "billing-api"
	ctx := t.Context()
	if err := b.Clear(ctx, name); err != nil { // a closed record: a healthy call writes none
		t.Fatal(err)
	}
	// No copy is kept before the invalidation connection is up (it took
	// longer than 11 calls once in CI).
	testenv.WaitFor(t, testenv.LiveWithin, "the invalidation connection is up", s.Live)
	warm(t, s, b, name, policy)
	srv.do(t, "FLUSHALL")
	deadline := time.Now().Add(testStall)
	for s.Cached(name) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if s.Cached(name) {
		t.Fatalf("the copy outlived the flush by %v", testStall)
	}
	if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil {
		t.Fatalf("the call after the flush = %v", err)
	}
	if !ev.probed() || !ev.has(driver.ErrLost) {
		t.Errorf("the call after the flush: probe %v, ErrLost reported %v; want both", ev.probed(), ev.has(driver.ErrLost))
	}
}

// transitions is events that also keeps the transitions.
type transitions struct {
	events
	tr []circuit.Transition
}

func (e *transitions) ObserveTransition(tr circuit.Transition) {
	e.mu.Lock()
	e.tr = append(e.tr, tr)
	e.mu.Unlock()
}

// probed reports whether a transition to half-open was heard.
func (e *transitions) probed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, tr := range e.tr {
		if tr.To == circuit.StateHalfOpen {
			return true
		}
	}
	return false
}

// TestLostAgainWhileMadeUnknown: the circuit's key deleted over and over
// (an eviction storm: each write evicted as soon as it lands) while four
// callers find it lost and make it unknown, every probe failing. A key
// lost again between the unknown record's write and the read after it must
// not pass for no record, a new circuit: every call admitted is a probe;
// with copies and without.
func TestLostAgainWhileMadeUnknown(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []redisstore.Option
	}{
		{"NoCopies", nil},
		{"Copies", []redisstore.Option{redisstore.WithCopies(testStall)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, true)
			s := open(t, unixClient(t, srv.sock), tt.opts...)
			b := circuit.New(s)
			const name = "billing-api"
			ctx := t.Context()
			if err := b.ForceOpen(ctx, name, time.Minute); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Allow(ctx, name, policy); !errors.Is(err, circuit.ErrOpen) {
				t.Fatalf("Allow on the open circuit = %v", err)
			}
			evict := unixClient(t, srv.sock)
			testenv.RequireNoneClosedWhileLost(t, b, name, policy, func() bool { return evict.Del(ctx, s.Key(name)).Err() == nil })
		})
	}
}

// TestExpiredTombstoneNotLostWithCopies is TestExpiredTombstoneNotLost with
// copies. The process that found the tombstone keeps no copy of it: its
// expiry (or a volatile-* eviction: tombstones are the only keys with a
// TTL) would invalidate a copy of none, which reads as a record's creation,
// and the next Load would report a loss.
func TestExpiredTombstoneNotLostWithCopies(t *testing.T) {
	srv := startServer(t, true)
	c := unixClient(t, srv.sock)
	s := open(t, c, redisstore.WithCopies(testStall))
	testenv.WaitFor(t, testenv.LiveWithin, "the invalidation connection is up", s.Live)
	ev := &events{}
	b := circuit.New(s, circuit.WithObserver(ev))
	const name = "billing-api"
	ctx := t.Context()
	if err := b.Clear(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, name); err != nil { // a tombstone
		t.Fatal(err)
	}
	for range 3 { // reads that find the tombstone
		if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Cached(name) {
		t.Fatal("a copy of the tombstone: its expiry would read as a creation")
	}
	srv.do(t, "PEXPIRE", s.Key(name), 1) // the tombstone's day is over
	testenv.WaitFor(t, 5*time.Second, "the tombstone expired", func() bool {
		n, _ := c.Exists(ctx, s.Key(name)).Result()
		return n == 0
	})
	requireNotLost(t, b, ev, name)
}

// requireNotLost requires that three calls of the named circuit run, after
// its tombstone expired, and that no loss is reported.
func requireNotLost(t *testing.T, b *circuit.Breaker, ev *events, name string) {
	t.Helper()
	var ran int
	for range 3 {
		if err := b.Run(t.Context(), name, policy, func(context.Context) (circuit.Outcome, error) { ran++; return circuit.Success, nil }); err != nil {
			t.Fatalf("a call after the tombstone expired = %v", err)
		}
	}
	if ran != 3 || ev.has(driver.ErrLost) {
		t.Errorf("after the tombstone expired: %d of 3 calls ran, ErrLost reported %v; want 3 and no report", ran, ev.has(driver.ErrLost))
	}
}
