package pgxdb

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
	"github.com/circuitgen/circuitgen/testdata/clients/gone"
)

// dsn is a DSN for a server that went away.
func dsn(d *gone.Server) string {
	return fmt.Sprintf("postgres://nobody@%s/db?sslmode=disable&connect_timeout=2", d.Addr())
}

func newPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func state(t *testing.T, b *circuit.Breaker, name string) circuit.Snapshot {
	t.Helper()
	s, err := b.Snapshot(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// opensPastDeadlines runs query three times under a 100 ms deadline, each
// ending past it, and requires the named circuit open after them.
func opensPastDeadlines(t *testing.T, b *circuit.Breaker, name string, query func(context.Context) error) {
	t.Helper()
	for i := range 3 {
		late, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		err := query(late)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("query %d past its deadline: %v, want context.DeadlineExceeded", i, err)
		}
	}
	if s := state(t, b, name); s.State != circuit.StateOpen {
		t.Fatalf("after 3 queries past their deadline: %+v, want open", s)
	}
}

// TestQueryRowAgainstPostgres drives the guarded pool's QueryRow, whose
// error comes at Scan, against a real PostgreSQL: a row scans, no row and
// a caller's cancellation are no failures, a server that went away opens
// the circuit, and a rejected QueryRow's Scan returns the
// *circuit.OpenError without connecting.
func TestQueryRowAgainstPostgres(t *testing.T) {
	ctx := context.Background()
	kit := circuittest.New()
	db := NewGuardedPool(newPool(t, testenv.PostgresDSN(t)), kit.Breaker)

	var n int
	if err := db.QueryRow(ctx, "SELECT $1::int", 42).Scan(&n); err != nil || n != 42 {
		t.Fatalf("QueryRow.Scan = %d, %v; want 42", n, err)
	}
	for range 5 {
		if err := db.QueryRow(ctx, "SELECT 1 WHERE false").Scan(&n); !errors.Is(err, pgx.ErrNoRows) {
			t.Fatalf("QueryRow of no row: %v, want pgx.ErrNoRows", err)
		}
	}
	// Callers that give up while the query runs: whatever error pgx
	// wraps their cancellation in, it is not the server's failure.
	for range 5 {
		canceled, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		if err := db.QueryRow(canceled, "SELECT pg_sleep(5)").Scan(&n); err == nil {
			t.Fatal("QueryRow cancelled during pg_sleep succeeded")
		}
	}
	if s := state(t, kit.Breaker, "postgres"); s.State != circuit.StateClosed || s.Failures != 0 {
		t.Fatalf("after no rows and cancelled callers: %+v, want closed with no failure", s)
	}

	dead := gone.Start(t)
	gone := NewGuardedPool(newPool(t, dsn(dead)), kit.Breaker)
	for i := range 3 {
		err := gone.QueryRow(ctx, "SELECT 1").Scan(&n)
		var open *circuit.OpenError
		if err == nil || errors.As(err, &open) {
			t.Fatalf("QueryRow %d on a server that went away: %v, want its connection error", i, err)
		}
	}
	if s := state(t, kit.Breaker, "postgres"); s.State != circuit.StateOpen {
		t.Fatalf("after 3 failed connections: %+v, want open", s)
	}
	before := dead.Settled()
	row := gone.QueryRow(ctx, "SELECT 1")
	var open *circuit.OpenError
	if err := row.Scan(&n); !errors.As(err, &open) || open.Name != "postgres" {
		t.Fatalf("QueryRow on the open circuit: Scan = %v, want the *circuit.OpenError of postgres", err)
	}
	if after := dead.Conns(); after != before {
		t.Errorf("the rejected QueryRow connected %d times, want none", after-before)
	}
	// The healthy pool shares the circuit: it is rejected too.
	if err := db.QueryRow(ctx, "SELECT 1").Scan(&n); !errors.As(err, &open) {
		t.Errorf("QueryRow of the healthy pool on the open circuit: %v, want the *circuit.OpenError", err)
	}
}

// TestQueryAgainstPostgres drives the guarded pool's Query, which returns
// (pgx.Rows, error): an error during the query comes at rows.Err, after
// Query returned, and counts there. Three queries past their deadline
// open the circuit; rows read to their end, and a caller's cancellation,
// count no failure.
func TestQueryAgainstPostgres(t *testing.T) {
	ctx := context.Background()
	kit := circuittest.New()
	db := NewGuardedPool(newPool(t, testenv.PostgresDSN(t)), kit.Breaker)
	drain := func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
		}
		return rows.Err()
	}
	for range 3 {
		rows, err := db.Query(ctx, "SELECT generate_series(1, 3)")
		if err != nil {
			t.Fatal(err)
		}
		if err := drain(rows); err != nil {
			t.Fatal(err)
		}
		canceled, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		if rows, err = db.Query(canceled, "SELECT pg_sleep(5)"); err == nil {
			err = drain(rows)
		}
		if err == nil {
			t.Fatal("Query cancelled during pg_sleep succeeded")
		}
	}
	if s := state(t, kit.Breaker, "postgres"); s.State != circuit.StateClosed || s.Failures != 0 {
		t.Fatalf("after queries read to their end and cancelled callers: %+v, want closed with no failure", s)
	}
	opensPastDeadlines(t, kit.Breaker, "postgres", func(late context.Context) error {
		rows, err := db.Query(late, "SELECT pg_sleep(5)")
		if err == nil {
			err = drain(rows)
		}
		return err
	})
	var open *circuit.OpenError
	if _, err := db.Query(ctx, "SELECT 1"); !errors.As(err, &open) {
		t.Fatalf("Query on the open circuit: %v, want the *circuit.OpenError", err)
	}
}

// TestIteratorAgainstPostgres drives the guarded catalog's iter.Seq2 over
// PostgreSQL rows: a clean end is a success, stopping early neither a
// success nor a failure, errors from a server that went away open the
// circuit, and a rejected iteration yields one (0, *circuit.OpenError)
// without connecting.
func TestIteratorAgainstPostgres(t *testing.T) {
	ctx := context.Background()
	kit := circuittest.New()
	cat := NewGuardedCatalog(PoolCatalog{newPool(t, testenv.PostgresDSN(t))}, kit.Breaker)

	sum := 0
	for v, err := range cat.Numbers(ctx, 10) {
		if err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	if sum != 55 {
		t.Fatalf("sum of 1..10 = %d, want 55", sum)
	}
	dead := gone.Start(t)
	gone := NewGuardedCatalog(PoolCatalog{newPool(t, dsn(dead))}, kit.Breaker)
	for range 2 {
		for _, err := range gone.Numbers(ctx, 3) {
			if err == nil {
				t.Fatal("a series from a server that went away yielded a value")
			}
		}
	}
	// Stopping early: neither a success (which would reset the count)
	// nor a failure.
	for range cat.Numbers(ctx, 1000) {
		break
	}
	if s := state(t, kit.Breaker, "postgres-catalog"); s.State != circuit.StateClosed || s.Failures != 2 {
		t.Fatalf("after 2 failures and an early stop: %+v, want closed with 2 failures", s)
	}
	for _, err := range gone.Numbers(ctx, 3) {
		if err == nil {
			t.Fatal("a series from a server that went away yielded a value")
		}
	}
	if s := state(t, kit.Breaker, "postgres-catalog"); s.State != circuit.StateOpen {
		t.Fatalf("after 3 failures: %+v, want open", s)
	}
	before := dead.Settled()
	var got []error
	for v, err := range gone.Numbers(ctx, 3) {
		if v != 0 {
			t.Errorf("a rejected iteration yielded %d", v)
		}
		got = append(got, err)
	}
	var open *circuit.OpenError
	if len(got) != 1 || !errors.As(got[0], &open) {
		t.Fatalf("a rejected iteration yielded %v, want one *circuit.OpenError", got)
	}
	if after := dead.Conns(); after != before {
		t.Errorf("the rejected iteration connected %d times, want none", after-before)
	}
}

// TestFallbacksAgainstPostgres gives the guarded pool and catalog of a
// server that went away a fallback over the healthy server: once their
// circuits open, a rejected QueryRow returns the fallback's row and a
// rejected iteration ranges over the fallback's sequence, while the gone
// server is not dialed.
func TestFallbacksAgainstPostgres(t *testing.T) {
	ctx := context.Background()
	kit := circuittest.New()
	healthy := newPool(t, testenv.PostgresDSN(t))
	dead := gone.Start(t)
	gone := newPool(t, dsn(dead))
	db := NewGuardedPool(gone, kit.Breaker, WithPoolFallback(healthy))
	cat := NewGuardedCatalog(PoolCatalog{gone}, kit.Breaker, WithCatalogFallback(PoolCatalog{healthy}))
	var n int
	for range 3 {
		if err := db.QueryRow(ctx, "SELECT 1").Scan(&n); err == nil {
			t.Fatal("QueryRow on a server that went away succeeded")
		}
		for _, err := range cat.Numbers(ctx, 3) {
			if err == nil {
				t.Fatal("a series from a server that went away yielded a value")
			}
		}
	}
	before := dead.Settled()
	if err := db.QueryRow(ctx, "SELECT $1::int", 42).Scan(&n); err != nil || n != 42 {
		t.Fatalf("QueryRow on the open circuit = %d, %v; want 42 from the fallback", n, err)
	}
	sum := 0
	for v, err := range cat.Numbers(ctx, 4) {
		if err != nil {
			t.Fatalf("the fallback's series: %v", err)
		}
		sum += v
	}
	if sum != 10 {
		t.Fatalf("sum of the fallback's 1..4 = %d, want 10", sum)
	}
	if after := dead.Conns(); after != before {
		t.Errorf("the rejected calls dialed the gone server %d times, want none", after-before)
	}
}

// TestOpenedIteratorAgainstPostgres drives the guarded catalog's Ints,
// which returns (iter.Seq2[int, error], error): pgx sends the query at
// the call, and an error during it comes while the rows are ranged over,
// after Ints returned, and counts there. Rows read to their end count no
// failure; three queries past their deadline open the circuit; a server
// that went away fails at open.
func TestOpenedIteratorAgainstPostgres(t *testing.T) {
	ctx := context.Background()
	kit := circuittest.New()
	cat := NewGuardedCatalog(PoolCatalog{newPool(t, testenv.PostgresDSN(t))}, kit.Breaker)
	sum := func(ctx context.Context, c Catalog, sql string) (int, error) {
		seq, err := c.Ints(ctx, sql)
		if err != nil {
			return 0, err
		}
		n := 0
		for v, err := range seq {
			if err != nil {
				return n, err
			}
			n += v
		}
		return n, nil
	}
	if n, err := sum(ctx, cat, "SELECT generate_series(1, 10)"); err != nil || n != 55 {
		t.Fatalf("sum of 1..10 = %d, %v; want 55", n, err)
	}
	opensPastDeadlines(t, kit.Breaker, "postgres-catalog", func(late context.Context) error {
		_, err := sum(late, cat, "SELECT 1 FROM pg_sleep(5)")
		return err
	})
	var open *circuit.OpenError
	if _, err := cat.Ints(ctx, "SELECT 1"); !errors.As(err, &open) {
		t.Fatalf("Ints on the open circuit: %v, want the *circuit.OpenError", err)
	}

	kit = circuittest.New()
	down := NewGuardedCatalog(PoolCatalog{newPool(t, dsn(gone.Start(t)))}, kit.Breaker)
	for range 3 {
		if seq, err := down.Ints(ctx, "SELECT 1"); err == nil || seq != nil {
			t.Fatalf("Ints on a server that went away: %v, %v; want no iterator and an error", seq != nil, err)
		}
	}
	if s := state(t, kit.Breaker, "postgres-catalog"); s.State != circuit.StateOpen {
		t.Fatalf("after 3 failures at open: %+v, want open", s)
	}
}

// TestCloseFirstAgainstPostgres reads the guarded pool's rows as pgx's
// idioms do, closing them before Next returned false: pgx.CollectOneRow,
// and rows.Close then rows.Err. pgx finishes reading, and reports the
// query's error, in Close: a half-open probe read so closes the circuit,
// and three queries past their deadline, read so, open it.
func TestCloseFirstAgainstPostgres(t *testing.T) {
	ctx := context.Background()
	kit := circuittest.New()
	db := NewGuardedPool(newPool(t, testenv.PostgresDSN(t)), kit.Breaker)
	kit.HalfOpen("postgres")
	rows, err := db.Query(ctx, "SELECT $1::int", 42)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := pgx.CollectOneRow(rows, pgx.RowTo[int]); err != nil || n != 42 {
		t.Fatalf("CollectOneRow = %d, %v; want 42", n, err)
	}
	if s := state(t, kit.Breaker, "postgres"); s.State != circuit.StateClosed {
		t.Fatalf("after a half-open probe read with CollectOneRow: %+v, want closed", s)
	}
	opensPastDeadlines(t, kit.Breaker, "postgres", func(late context.Context) error {
		rows, err := db.Query(late, "SELECT pg_sleep(5)")
		if err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	})
}
