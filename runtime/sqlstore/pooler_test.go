//go:build unix

package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// TestPooler puts a real pgbouncer between a cached store and PostgreSQL,
// in session, transaction and statement pooling mode, while a process
// connected directly opens the circuit. In session mode the copies work:
// the store goes live and sees the opening within the stall bound. In the
// other modes a LISTEN is not a session's, so invalidations would go
// astray: the store must serve no copies, say so once, and it too sees the
// opening within the bound. Once the store is closed, no pooled server
// connection listens: a LISTEN left on one would send the store's
// notifications to every client the pooler hands it to.
func TestPooler(t *testing.T) {
	for _, tt := range []struct{ name, mode, setting string }{
		{"session", "session", ""},
		{"transaction", "transaction", ""},
		{"statement", "statement", ""},
		// Server connections handed out in turn, not the last released first.
		{"transaction_round_robin", "transaction", "server_round_robin = 1"},
	} {
		mode := tt.mode
		t.Run(tt.name, func(t *testing.T) {
			direct, pooled := pgbouncer(t, mode, tt.setting)
			_ = listening(t, pooled) // opens the pool's eight server connections
			s, err := sqlstore.New(t.Context(), openPostgres(t, pooled, nil), sqlstore.Postgres, sqlstore.WithCopies(testStall))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			opener, err := sqlstore.New(t.Context(), openPostgres(t, direct, nil), sqlstore.Postgres)
			if err != nil {
				t.Fatal(err)
			}
			const name = "billing-api"
			rep := &reports{}
			b, ob := circuit.New(s, circuit.WithObserver(rep)), circuit.New(opener)
			ok := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
			// Healthy calls for two stall bounds: copies go live if they can.
			// Session pooling must get them live; a loaded machine (CI runs
			// every package at once) may take longer than two bounds to.
			start := time.Now()
			for end := start.Add(2 * testStall); time.Now().Before(end) || mode == "session" && !s.Live(); time.Sleep(20 * time.Millisecond) {
				if err := b.Run(t.Context(), name, policy, ok); err != nil {
					t.Fatalf("healthy call through pgbouncer (%s pooling): %v", mode, err)
				}
				if time.Since(start) > testenv.LiveWithin {
					t.Fatalf("copies did not go live behind pgbouncer in %s pooling within %v", mode, testenv.LiveWithin)
				}
			}
			t.Logf("%s pooling: healthy calls for %v, copies live: %v", mode, time.Since(start).Round(time.Millisecond), s.Live())
			if mode == "transaction" && s.Cached(name) {
				t.Fatal("a copy kept behind pgbouncer in transaction pooling")
			}
			for range policy.FailureThreshold {
				_ = ob.Run(t.Context(), name, policy, func(context.Context) (circuit.Outcome, error) {
					return circuit.Failure, errors.New("billing down")
				})
			}
			opened := time.Now()
			time.Sleep(testStall + 100*time.Millisecond)
			late := 0
			for range 20 {
				err := b.Run(t.Context(), name, policy, ok)
				var oe *circuit.OpenError
				switch {
				case err == nil:
					late++
				case !errors.As(err, &oe):
					t.Fatalf("call after the opening: %v, want an OpenError", err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			rep.mu.Lock()
			said := 0
			for _, err := range rep.errs {
				if strings.Contains(fmt.Sprint(err), "pooler in transaction mode") {
					said++
				}
			}
			rep.mu.Unlock()
			if want := map[string]int{"session": 0, "transaction": 1, "statement": 1}[mode]; said != want {
				t.Errorf("the store said %d times that no heartbeat came back, want %d: %v", said, want, rep.errs)
			}
			if late > 0 {
				t.Fatalf("%d of 20 calls admitted more than %v after another process opened the circuit (%s pooling)",
					late, time.Since(opened).Round(time.Millisecond), mode)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := listening(t, pooled); len(got) > 0 {
				t.Errorf("pooled server connections listen on %v after the store closed (%s pooling)", got, mode)
			}
		})
	}
}

// listening returns the channels that the server connections of the
// test's pgbouncer listen on: eight statements at once, the pool's size,
// each hold one of them, so that every server connection answers.
func listening(t *testing.T, pooled string) []string {
	t.Helper()
	db := openPostgres(t, pooled, nil)
	const q = `SELECT coalesce(string_agg(c, ','), '') FROM (SELECT pg_sleep(0.5)) s, pg_listening_channels() c`
	var (
		mu   sync.Mutex
		got  []string
		wg   sync.WaitGroup
		errs = make(chan error, 8)
	)
	for range 8 {
		wg.Go(func() {
			var chans string
			if err := db.QueryRowContext(t.Context(), q).Scan(&chans); err != nil {
				errs <- err
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if chans != "" {
				got = append(got, chans)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return got
}

// pgbouncer creates a database of the test's own, migrated, and starts a
// pgbouncer of the test's own in front of it in pool mode mode. It returns
// the DSN of the database and the DSN through pgbouncer.
func pgbouncer(t *testing.T, mode string, settings ...string) (direct, pooled string) {
	t.Helper()
	base := testenv.PostgresDSN(t)
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	db := "circuitgen_pool_" + randomHex(6)
	admin := openPostgres(t, base, nil)
	if _, err := admin.ExecContext(t.Context(), "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)") })
	direct = base + " dbname=" + db
	migrate(t, openPostgres(t, direct, nil), sqlstore.Postgres)
	return direct, testenv.StartPgbouncer(t, mode, testenv.PostgresTarget{Host: cfg.Host, Port: cfg.Port, Database: db, User: cfg.User}, settings...)
}
