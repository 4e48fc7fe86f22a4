package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
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
	testenv.WaitFor(t, testenv.LiveWithin, "the listening connection is up", s.Live)
	return s, db
}

// refuseWrites makes the database of s refuse every write to the tables
// of circuits, as a read-only database or a hot standby does, until the
// returned function is called: a statement trigger that raises SQLSTATE
// 25006 (read_only_sql_transaction) on PostgreSQL, RAISE(ABORT) triggers on
// SQLite. Reads go on. It is drivertest's RefuseWrites hook; dbs maps each
// store to its database.
func refuseWrites(d sqlstore.Dialect, dbs map[circuit.Store]*sql.DB) func(t *testing.T, s circuit.Store) func() {
	return func(t *testing.T, s circuit.Store) func() {
		t.Helper()
		db := dbs[s]
		var on, off []string
		if d == sqlstore.Postgres {
			on = []string{`CREATE FUNCTION circuitgen_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'cannot execute % in a read-only transaction', TG_OP USING ERRCODE = '25006'; END $$`}
			for _, table := range []string{"circuits", "circuit_windows"} {
				on = append(on, "CREATE TRIGGER circuitgen_test_refuse BEFORE INSERT OR UPDATE OR DELETE ON "+table+
					" FOR EACH STATEMENT EXECUTE FUNCTION circuitgen_test_refuse()")
			}
			off = []string{"DROP FUNCTION circuitgen_test_refuse() CASCADE"}
		} else {
			for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
				name := "circuitgen_test_refuse_" + strings.ToLower(op)
				on = append(on, "CREATE TRIGGER "+name+" BEFORE "+op+" ON circuits BEGIN SELECT RAISE(ABORT, 'attempt to write a readonly database'); END")
				off = append(off, "DROP TRIGGER "+name)
			}
		}
		exec := func(stmts []string) {
			for _, q := range stmts {
				if _, err := db.ExecContext(context.Background(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		exec(on)
		return func() { exec(off) }
	}
}
