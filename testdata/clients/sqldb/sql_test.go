package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
	"github.com/circuitgen/circuitgen/testdata/clients/gone"
)

// TestQueryRowContextAgainstPostgres drives a guarded *sql.DB, over pgx's
// database/sql driver, against a real PostgreSQL: a row scans, no row is
// no failure, a server that went away opens the circuit, and a rejected
// QueryRowContext returns a *sql.Row whose Err and Scan are the
// *circuit.OpenError, without connecting.
func TestQueryRowContextAgainstPostgres(t *testing.T) {
	ctx := context.Background()
	kit := circuittest.New()
	healthy := open(t, testenv.PostgresDSN(t))
	db := NewGuardedDB(healthy, kit.Breaker)
	var n int
	if err := db.QueryRowContext(ctx, "SELECT $1::int", 7).Scan(&n); err != nil || n != 7 {
		t.Fatalf("QueryRowContext.Scan = %d, %v; want 7", n, err)
	}
	for range 5 {
		if err := db.QueryRowContext(ctx, "SELECT 1 WHERE false").Scan(&n); !errors.Is(err, sql.ErrNoRows) {
			t.Fatalf("no row: %v, want sql.ErrNoRows", err)
		}
	}

	dead := gone.Start(t)
	down := NewGuardedDB(open(t, fmt.Sprintf("postgres://nobody@%s/db?sslmode=disable&connect_timeout=2", dead.Addr())), kit.Breaker)
	for i := range 3 {
		var ce *pgconn.ConnectError
		if err := down.QueryRowContext(ctx, "SELECT 1").Err(); !errors.As(err, &ce) {
			t.Fatalf("QueryRowContext %d on a server that went away: Err = %v, want a *pgconn.ConnectError", i, err)
		}
	}
	if s, _ := kit.Breaker.Snapshot(ctx, "sql"); s.State != circuit.StateOpen {
		t.Fatalf("after 3 failed connections: %+v, want open", s)
	}
	before := dead.Settled()
	row := down.QueryRowContext(ctx, "SELECT 1")
	var open *circuit.OpenError
	if err := row.Err(); !errors.As(err, &open) || open.Name != "sql" {
		t.Fatalf("rejected QueryRowContext: Err = %v, want the *circuit.OpenError of sql", err)
	}
	if err := row.Scan(&n); !errors.As(err, &open) {
		t.Fatalf("rejected QueryRowContext: Scan = %v, want the *circuit.OpenError", err)
	}
	if after := dead.Conns(); after != before {
		t.Errorf("the rejected QueryRowContext connected %d times, want none", after-before)
	}
	if err := db.PingContext(ctx); !errors.As(err, &open) {
		t.Errorf("PingContext of the healthy database on the open circuit: %v, want the *circuit.OpenError", err)
	}
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
