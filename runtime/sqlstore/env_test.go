package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// backend is a database the store is tested on.
type backend struct {
	name string
	// create makes a fresh, migrated database for one test and returns the
	// DSN that opens it.
	create func(t testing.TB) string
	// open opens dsn with a tracer (may be nil; PostgreSQL only).
	open    func(t testing.TB, dsn string, tracer pgx.QueryTracer) *sql.DB
	dialect sqlstore.Dialect
	cached  bool // local copies, invalidated by LISTEN/NOTIFY (PostgreSQL)
}

var backends = []backend{
	{"postgres", createPostgres, openPostgres, sqlstore.Postgres, false},
	{"sqlite", createSQLite, openSQLite, sqlstore.SQLite, false},
}

// cachedPostgres is PostgreSQL with local copies.
var cachedPostgres = backend{"postgres-cached", createPostgres, openPostgres, sqlstore.Postgres, true}

// testStall is the stall bound of the tests' cached stores.
const testStall = 400 * time.Millisecond

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// createPostgres creates a schema of its own for the test, dropped when it
// ends, and returns a DSN whose search_path is that schema.
func createPostgres(t testing.TB) string {
	t.Helper()
	base := testenv.PostgresDSN(t)
	schema := "circuitgen_test_" + randomHex(6)
	admin := openPostgres(t, base, nil)
	if _, err := admin.ExecContext(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	dsn := base + " search_path=" + schema
	migrate(t, openPostgres(t, dsn, nil), sqlstore.Postgres)
	return dsn
}

func openPostgres(t testing.TB, dsn string, tracer pgx.QueryTracer) *sql.DB {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = tracer
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// createSQLite creates a database file in a temporary directory.
func createSQLite(t testing.TB) string {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "circuits.db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	migrate(t, openSQLite(t, dsn, nil), sqlstore.SQLite)
	return dsn
}

func openSQLite(t testing.TB, dsn string, _ pgx.QueryTracer) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func migrate(t testing.TB, db *sql.DB, d sqlstore.Dialect) {
	t.Helper()
	s, err := sqlstore.New(t.Context(), db, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// newStore returns a store on a fresh database of backend b, and its *sql.DB.
func (b backend) newStore(t testing.TB) (*sqlstore.Store, *sql.DB) {
	t.Helper()
	return b.openStore(t, b.create(t))
}

// openStore opens a store of backend b on the database dsn names, and
// returns it and its *sql.DB; a cached one once it is listening.
func (b backend) openStore(t testing.TB, dsn string) (*sqlstore.Store, *sql.DB) {
	t.Helper()
	db := b.open(t, dsn, nil)
	if !b.cached {
		s, err := sqlstore.New(t.Context(), db, b.dialect)
		if err != nil {
			t.Fatal(err)
		}
		return s, db
	}
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres, sqlstore.WithCopies(testStall))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	testenv.WaitFor(t, 5*time.Second, "the listening connection is up", s.Live)
	return s, db
}
