package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver/drivertest"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// TestCachedConformance runs the drivertest suite on PostgreSQL with local
// copies. The Corrupt hook's UPDATE is another client's write: the store
// sees it once the trigger's notification arrives.
func TestCachedConformance(t *testing.T) {
	dbs := map[circuit.Store]*sql.DB{}
	drivertest.Run(t, drivertest.Config{
		Open: func(t *testing.T) circuit.Store {
			s, db := cachedPostgres.newStore(t)
			dbs[s] = db
			return s
		},
		Corrupt: func(t *testing.T, s circuit.Store, name string) {
			if _, err := dbs[s].ExecContext(t.Context(), "UPDATE circuits SET state = 'ajar' WHERE name = $1", name); err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, time.Second, "the copy is dropped", func() bool { return !s.(*sqlstore.Store).Cached(name) })
		},
		RefuseWrites: refuseWrites(sqlstore.Postgres, dbs),
	})
}

// TestCachedSteadyState counts the statements healthy calls run on a
// cached store (a pgx tracer on its pool): none once the copy is read.
func TestCachedSteadyState(t *testing.T) {
	dsn := cachedPostgres.create(t)
	tr := &tracer{}
	s, err := sqlstore.New(t.Context(), openPostgres(t, dsn, tr), sqlstore.Postgres, sqlstore.WithCopies(testStall))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	testenv.WaitFor(t, 5*time.Second, "listening", s.Live)
	b := circuit.New(s)
	ctx := t.Context()
	warm(t, s, b, "billing-api", policy)
	tr.take()
	start := time.Now()
	for range 10000 {
		if err := b.Run(ctx, "billing-api", policy, op(circuit.Success)); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Cached("billing-api") {
		t.Fatal("the copy went away")
	}
	got := tr.take()
	t.Logf("10,000 healthy calls from the copy in %v: %d statements %v", time.Since(start), len(got), got)
	// The target is at most 0.01 statements a call: a change another test
	// makes on the shared server can invalidate the copy once in a while.
	if len(got) > 100 {
		t.Fatalf("%d statements for 10,000 healthy calls, want at most 100 (0.01 a call)", len(got))
	}
}

// TestInvalidationDelay measures how long an opening made through one
// cached store takes to reach another's copy (the trigger's NOTIFY to the
// other's LISTEN): the 90th percentile at most 50 ms (the maximum is logged;
// see the Redis store's TestInvalidationDelay).
func TestInvalidationDelay(t *testing.T) {
	dsn := cachedPostgres.create(t)
	a, _ := cachedPostgres.openStore(t, dsn)
	bs, _ := cachedPostgres.openStore(t, dsn)
	ba, bb := circuit.New(a), circuit.New(bs)
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: 10 * time.Second}
	const name, rounds = "billing-api", 50
	var delays []time.Duration
	for range rounds {
		warm(t, bs, bb, name, p)
		if err := ba.Run(ctx, name, p, op(circuit.Failure)); !errors.Is(err, errDown) {
			t.Fatalf("opening Run = %v", err)
		}
		delays = append(delays, testenv.WaitFor(t, time.Second, "the other's copy is dropped", func() bool { return !bs.Cached(name) }))
		if err := bb.Run(ctx, name, p, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
			t.Fatalf("the other's Run after the opening = %v, want it rejected", err)
		}
		if err := ba.Clear(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(delays)
	p90 := delays[rounds*9/10]
	t.Logf("opening seen by the other store after: p50 %v, p90 %v, max %v (%d rounds)", delays[rounds/2], p90, delays[rounds-1], rounds)
	if p90 > 50*time.Millisecond {
		t.Errorf("openings took up to %v (p90) to reach the other store, want at most 50ms", p90)
	}
}

// TestListenerKilled terminates the listening connection
// (pg_terminate_backend): the copies are dropped, an opening made
// meanwhile is seen by the next call, and the store listens again.
func TestListenerKilled(t *testing.T) {
	dsn := cachedPostgres.create(t)
	s, db := cachedPostgres.openStore(t, dsn)
	other, _ := backends[0].openStore(t, dsn)
	b, ob := circuit.New(s), circuit.New(other)
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: 10 * time.Second}
	const name = "billing-api"
	warm(t, s, b, name, p)
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", sqlstore.ListenerName).Scan(&n); err != nil || n == 0 {
		t.Fatalf("terminated %d listening connections: %v", n, err)
	}
	d := testenv.WaitFor(t, time.Second, "the copies are dropped", func() bool { return !s.Live() && !s.Cached(name) })
	t.Logf("%d listening connections terminated: copies dropped after %v", n, d)
	if err := ob.Run(ctx, name, p, op(circuit.Failure)); !errors.Is(err, errDown) {
		t.Fatal(err)
	}
	if err := b.Run(ctx, name, p, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
		t.Fatalf("Run after an opening made while the listener was down = %v, want it rejected", err)
	}
	testenv.WaitFor(t, 5*time.Second, "listening again", s.Live)
	if err := ob.Clear(ctx, name); err != nil {
		t.Fatal(err)
	}
	warm(t, s, b, name, p)
	if err := ob.Run(ctx, name, p, op(circuit.Failure)); !errors.Is(err, errDown) {
		t.Fatal(err)
	}
	testenv.WaitFor(t, time.Second, "the copy is dropped by the new connection", func() bool { return !s.Cached(name) })
}

// TestCachedServerStopped stops PostgreSQL (immediate) under a cached
// store: the copies are dropped and no call is admitted after that.
func TestCachedServerStopped(t *testing.T) {
	srv := startThrowawayPostgres(t)
	db := openPostgres(t, srv.DSN(), nil)
	if err := sqlstoreMigrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	s, _ := cachedPostgres.openStore(t, srv.DSN())
	b := circuit.New(s)
	ctx := t.Context()
	warm(t, s, b, "billing-api", policy)
	srv.stop(t)
	d := testenv.WaitFor(t, 2*time.Second, "the copies are dropped", func() bool { return !s.Cached("billing-api") })
	t.Logf("copies dropped %v after pg_ctl stop -m immediate returned", d)
	calls := 0
	for range 5 {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := b.Run(cctx, "billing-api", policy, func(context.Context) (circuit.Outcome, error) { calls++; return circuit.Success, nil })
		cancel()
		var se *circuit.StateError
		if !errors.As(err, &se) {
			t.Fatalf("Run with the server stopped = %v, want a StateError", err)
		}
	}
	if calls != 0 {
		t.Fatalf("%d calls admitted with the server stopped, want 0", calls)
	}
}

func sqlstoreMigrate(ctx context.Context, db *sql.DB) error {
	s, err := sqlstore.New(ctx, db, sqlstore.Postgres)
	if err != nil {
		return err
	}
	return s.Migrate(ctx)
}
