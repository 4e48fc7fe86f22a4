//go:build linux

package fleetnemesis

import (
	"context"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/faultproxy"
	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
)

// sortedKinds returns the fault kinds of m in order.
func sortedKinds(m map[string]func(*testing.T, *fleet)) []string {
	return slices.Sorted(maps.Keys(m))
}

// spell returns a random span of n to 2n stall bounds.
func spell(n int) time.Duration {
	return time.Duration(n)*fleetBound + time.Duration(mrand.Int64N(int64(n)*int64(fleetBound)))
}

// proxyFaults are the network's faults, on every store's proxy.
func proxyFaults() map[string]func(*testing.T, *fleet) {
	return map[string]func(*testing.T, *fleet){
		// A link that gets slower without ever going silent: 0.8 stall
		// bounds more each second, to four bounds.
		"ramp": func(t *testing.T, f *fleet) {
			f.proxy.Ramp(fleetBound*8/100, 100*time.Millisecond, 4*fleetBound)
			time.Sleep(fleetBound)
			f.proxy.SetDelay(0)
			time.Sleep(4 * fleetBound) // bytes already delayed are delivered
		},
		// One direction of some connections held (a one-way blackhole).
		"blackhole": func(t *testing.T, f *fleet) {
			var held []*faultproxy.Conn
			var dirs []faultproxy.Direction
			for _, c := range f.proxy.Conns() {
				if mrand.IntN(2) == 0 {
					d := faultproxy.Direction(mrand.IntN(2))
					c.Hold(d)
					held, dirs = append(held, c), append(dirs, d)
				}
			}
			time.Sleep(spell(2))
			for i, c := range held {
				c.Release(dirs[i])
			}
		},
		// Every connection reset.
		"reset": func(t *testing.T, f *fleet) { f.proxy.Reset() },
		// Every connection paused, both ways.
		"pause": func(t *testing.T, f *fleet) {
			f.proxy.Pause()
			time.Sleep(spell(2))
			f.proxy.Resume()
		},
		// A worker frozen, then thawed.
		"sigstop": func(t *testing.T, f *fleet) {
			w := f.workers[mrand.IntN(len(f.workers))]
			_ = w.cmd.Process.Signal(syscall.SIGSTOP)
			time.Sleep(spell(2))
			_ = w.cmd.Process.Signal(syscall.SIGCONT)
		},
	}
}

// newProxy returns a proxy to the server at network, addr, closed when the
// test ends.
func newProxy(t *testing.T, network, addr string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// newRedisFleet starts a redis-server of the run's own, with the
// recommended settings, and its faults besides the network's: restarts
// with the append-only file and without (its files removed, as a server
// that persists nothing loses them), and FLUSHALL.
func newRedisFleet(t *testing.T) target {
	dir := t.TempDir()
	var mu sync.Mutex
	cmd, sock := testenv.StartRedisIn(t, dir)
	direct := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = direct.Close() })
	tg := target{name: "redis", prefix: "fleet:" + randomHex(4) + ":"}
	s, err := redisstore.New(t.Context(), direct, redisstore.WithPrefix(tg.prefix))
	if err != nil {
		t.Fatal(err)
	}
	tg.opener = circuit.New(s)
	tg.proxy = newProxy(t, "unix", sock)
	tg.addr = "redis://" + tg.proxy.Addr() + "/0"
	restart := func(lose bool) func(*testing.T, *fleet) {
		return func(t *testing.T, f *fleet) {
			mu.Lock()
			defer mu.Unlock()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if lose {
				_ = os.RemoveAll(filepath.Join(dir, "appendonlydir"))
				_ = os.Remove(filepath.Join(dir, "dump.rdb"))
			}
			cmd, _ = testenv.StartRedisIn(t, dir)
		}
	}
	tg.faults = proxyFaults()
	tg.faults["restart"] = restart(false)
	tg.faults["restart-lossy"] = restart(true)
	// The server refuses every write while it serves reads, as a replica
	// or a master without its replicas does (NOREPLICAS).
	tg.faults["read-only"] = func(t *testing.T, f *fleet) {
		set := func(n string) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := direct.ConfigSet(ctx, "min-replicas-to-write", n).Err(); err != nil {
				t.Errorf("CONFIG SET min-replicas-to-write %s: %v", n, err)
			}
		}
		set("1")
		time.Sleep(spell(2))
		set("0")
	}
	tg.faults["flushall"] = func(t *testing.T, f *fleet) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = direct.FlushAll(ctx).Err()
	}
	return tg
}

// newPostgresFleet makes a schema of the run's own on the test server,
// migrated, and its faults besides the network's: the notify trigger
// dropped, and disabled, while the workers listen, then made again by
// Migrate; the circuits table truncated; writes refused. With pooler (a
// pgbouncer pool mode) the run has a database of its own instead, and the
// workers reach it through a pgbouncer of the run's own, behind the proxy.
func newPostgresFleet(t *testing.T, pooler string) target {
	base := testenv.PostgresDSN(t)
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	admin := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = admin.Close() })
	name := "circuitgen_fleet_" + randomHex(4)
	create, drop, dsn := "CREATE SCHEMA "+name, "DROP SCHEMA "+name+" CASCADE", base+" search_path="+name
	if pooler != "" {
		create, drop, dsn = "CREATE DATABASE "+name, "DROP DATABASE "+name+" WITH (FORCE)", base+" dbname="+name
	}
	if _, err := admin.ExecContext(t.Context(), create); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), drop) })
	dcfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*dcfg)
	t.Cleanup(func() { _ = db.Close() })
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	tg := target{name: "postgres", opener: circuit.New(s)}
	network, addr := "tcp", fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	workers := dsn
	if pooler != "" {
		workers = testenv.StartPgbouncer(t, pooler, testenv.PostgresTarget{Host: cfg.Host, Port: cfg.Port, Database: name, User: cfg.User})
		pcfg, err := pgx.ParseConfig(workers)
		if err != nil {
			t.Fatal(err)
		}
		network, addr = "tcp", fmt.Sprintf("%s:%d", pcfg.Host, pcfg.Port)
	}
	tg.proxy = newProxy(t, network, addr)
	host, port, _ := strings.Cut(tg.proxy.Addr(), ":")
	tg.addr = workers + " host=" + host + " port=" + port
	trigger := func(stmt string) func(*testing.T, *fleet) {
		return func(t *testing.T, f *fleet) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
			time.Sleep(spell(2))
			if err := s.Migrate(ctx); err != nil {
				t.Errorf("migrate again: %v", err)
			}
		}
	}
	tg.faults = proxyFaults()
	tg.faults["trigger-drop"] = trigger("DROP TRIGGER circuitgen_notify ON circuits")
	tg.faults["trigger-disable"] = trigger("ALTER TABLE circuits DISABLE TRIGGER circuitgen_notify")
	// The database refuses every write while it serves reads, as a hot
	// standby or a database made read-only does (SQLSTATE 25006).
	tg.faults["read-only"] = func(t *testing.T, f *fleet) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, stmt := range []string{
			`CREATE FUNCTION circuitgen_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'cannot execute % in a read-only transaction', TG_OP USING ERRCODE = '25006'; END $$`,
			`CREATE TRIGGER circuitgen_refuse BEFORE INSERT OR UPDATE OR DELETE ON circuits
FOR EACH STATEMENT EXECUTE FUNCTION circuitgen_refuse()`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
		time.Sleep(spell(2))
		ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP FUNCTION circuitgen_refuse() CASCADE"); err != nil {
			t.Errorf("drop the refusing trigger: %v", err)
		}
	}
	// Every row gone at once, as an operator's TRUNCATE does: no row
	// trigger fires, and no Clear was made.
	tg.faults["truncate"] = func(t *testing.T, f *fleet) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "TRUNCATE circuits"); err != nil {
			t.Errorf("truncate: %v", err)
		}
	}
	return tg
}
