package storeurl_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
	"github.com/circuitgen/circuitgen/runtime/storeurl"
)

func TestOpenFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, raw := range []string{"file://" + dir, "file://localhost" + dir} {
		s, err := storeurl.Open(ctx, raw)
		if err != nil {
			t.Fatalf("Open(%s): %v", raw, err)
		}
		p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: time.Second}
		if err := circuit.New(s).Run(ctx, "billing-api", p, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
			t.Fatal(err)
		}
		if err := circuit.New(s).Clear(ctx, "billing-api"); err != nil { // a record: a healthy call writes none
			t.Fatal(err)
		}
		if names, err := s.Names(ctx); err != nil || !slices.Equal(names, []string{"billing-api"}) {
			t.Fatalf("Names = %q, %v", names, err)
		}
		// The store itself, so a Breaker finds the file store's boot clock.
		if _, ok := s.(*filestore.Store); !ok {
			t.Fatalf("Open(%s) = %T, want the *filestore.Store itself", raw, s)
		}
		if _, ok := s.(driver.Clock); !ok {
			t.Fatalf("%T is not a driver.Clock", s)
		}
		if r := storeurl.Redact(raw); r != raw {
			t.Errorf("Redact = %q, want %q", r, raw)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url, want string
	}{
		{"", "has no scheme"},
		{"/var/lib/circuits", "has no scheme"},
		{"ftp://host/x", `unsupported scheme "ftp"`},
		{"file:relative", "file:///absolute/path"},
		{"file://host/x", "file:///absolute/path"},
		{"file:///x?y=1", "no user, query or fragment"},
		{"file:///nonexistent/state", "state directory /nonexistent/state does not exist"},
		{"file:///nonexistent/app@1", "state directory /nonexistent/app@1 does not exist"},
		// An @ after the host is refused, even in a query value: a
		// password's unescaped ? would put its @ there. %40 is accepted.
		{"postgres://127.0.0.1:1/db?connect_timeout=1&application_name=me@host", "escape it (%40)"},
		{"postgres://127.0.0.1:1/db?connect_timeout=1&application_name=me%40host", "application_name=me%40host"},
		{"file://" + file, "is not a directory"},
		{"sqlite:///nonexistent/c.db", "database file /nonexistent/c.db does not exist"},
		{"sqlite://host/c.db", "sqlite:///absolute/path/to.db"},
		{"redis://:secret@[::1", "missing ']'"},
		{"redis://u:secret@127.0.0.1:1/0?bogus=1", "redis URL"},
		{"redis://u:secret@127.0.0.1:1/0", "u:xxxxx@127.0.0.1:1"},
		{"postgres://u:secret@127.0.0.1:1/db?connect_timeout=1", "postgres"},
	}
	for _, tt := range append(tests, passwordURLs...) {
		t.Run(tt.url, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s, err := storeurl.Open(ctx, tt.url)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open: %v; want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") || leaks(err.Error()) {
				t.Fatalf("Open: the password leaked: %v", err)
			}
			err = storeurl.Migrate(ctx, tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Migrate: %v; want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") || leaks(err.Error()) {
				t.Fatalf("Migrate: the password leaked: %v", err)
			}
			if r := storeurl.Redact(tt.url); strings.Contains(r, "secret") || leaks(r) {
				t.Fatalf("Redact = %q: the password leaked", r)
			}
		})
	}
}

// TestOpenPostgresCache opens PostgreSQL with local copies (the default)
// and with ?cache=off: both run guarded calls; only the first keeps a
// listening connection (application_name circuitgen-invalidations).
func TestOpenPostgresCache(t *testing.T) {
	cfg, err := pgx.ParseConfig(testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	// A database of its own, so that the listening connections counted are
	// this test's, whatever other tests run on the server meanwhile.
	db := "storeurl_test_" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	admin := stdlib.OpenDB(*cfg)
	defer admin.Close()
	ctx := t.Context()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	defer admin.ExecContext(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)")
	raw := (&url.URL{Scheme: "postgres", User: url.User(cfg.User), Host: "localhost", Path: "/" + db,
		RawQuery: url.Values{"host": {cfg.Host}, "sslmode": {"disable"}}.Encode()}).String()
	cfg.Database = db
	mdb := stdlib.OpenDB(*cfg)
	mig, err := sqlstore.New(ctx, mdb, sqlstore.Postgres)
	if err == nil {
		err = mig.Migrate(ctx)
	}
	mdb.Close()
	if err != nil {
		t.Fatal(err)
	}
	listeners := func() int {
		var n int
		if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND datname = $2", sqlstore.ListenerName, db).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := listeners()
	for _, tt := range []struct {
		query     string
		listening int
	}{{"", 1}, {"&cache=off", 0}} {
		s, err := storeurl.Open(ctx, raw+tt.query)
		if err != nil {
			t.Fatal(err)
		}
		p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: time.Second}
		if err := circuit.New(s).Run(ctx, "billing-api", p, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if got := listeners() - before; got != tt.listening {
			t.Errorf("%q: %d listening connections, want %d", tt.query, got, tt.listening)
		}
		s.Close()
	}
}

// postgresURL returns the postgres:// URL of the server a key=value DSN
// names, on database db.
func postgresURL(t *testing.T, dsn, db string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return (&url.URL{Scheme: "postgres", User: url.User(cfg.User), Path: "/" + db,
		RawQuery: url.Values{"host": {cfg.Host}, "sslmode": {"disable"}}.Encode()}).String()
}

// TestOpenRefusesStandby opens a hot standby, with copies and without:
// Open fails with sqlstore.ErrStandby rather than open a store whose reads
// would admit calls by rows replayed maybe long ago.
func TestOpenRefusesStandby(t *testing.T) {
	raw := postgresURL(t, testenv.PostgresStandbyDSN(t), "postgres")
	for _, q := range []string{"", "&cache=off"} {
		s, err := storeurl.Open(t.Context(), raw+q)
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, sqlstore.ErrStandby) {
			t.Errorf("Open(standby%s) = %v, want an error wrapping sqlstore.ErrStandby", q, err)
		}
	}
}

// TestMigrate opens databases never migrated: Open fails, saying to run
// Migrate, rather than open a store whose every call fails. Then Migrate,
// twice, makes each one a store a circuit opens in.
func TestMigrate(t *testing.T) {
	const want = "sqlstore: table circuits does not exist: run Migrate, on a store New made without WithCopies, or circuitctl migrate"
	file := filepath.Join(t.TempDir(), "c.db")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	raw := emptySchema(t)
	urls := []string{"sqlite://" + file, raw, raw + "&cache=off"}
	for _, raw := range urls {
		s, err := storeurl.Open(t.Context(), raw)
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want an error ending %q", raw, err, want)
		}
	}
	// Migrate makes each usable, and a second Migrate changes nothing.
	for _, raw := range urls {
		for range 2 {
			if err := storeurl.Migrate(t.Context(), raw); err != nil {
				t.Fatalf("Migrate(%s): %v", raw, err)
			}
		}
		s, err := storeurl.Open(t.Context(), raw)
		if err != nil {
			t.Fatalf("Open(%s) after Migrate: %v", raw, err)
		}
		b := circuit.New(s)
		fail := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errors.New("down") }
		if err := b.Run(t.Context(), "migrated", circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: time.Second}, fail); err == nil {
			t.Fatal("the failing call returned nil")
		}
		if snap, err := b.Snapshot(t.Context(), "migrated"); err != nil || snap.State != circuit.StateOpen {
			t.Fatalf("Snapshot after a failure: %+v, %v; want open", snap, err)
		}
		s.Close()
	}
}

// TestMigrateOther: Migrate of a store with no schema opens and closes it,
// and reports what Open would; a standby is refused.
func TestMigrateOther(t *testing.T) {
	dir := t.TempDir()
	if err := storeurl.Migrate(t.Context(), "file://"+dir); err != nil {
		t.Fatalf("Migrate(file://%s): %v", dir, err)
	}
	missing := filepath.Join(dir, "nope")
	if err := storeurl.Migrate(t.Context(), "file://"+missing); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Migrate(file://%s) = %v, want the missing directory reported", missing, err)
	}
	for _, raw := range []string{"sqlite:///nonexistent/c.db", "postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=1"} {
		err := storeurl.Migrate(t.Context(), raw)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Migrate(%s) = %v, want an error with no password", raw, err)
		}
	}
	standby := postgresURL(t, testenv.PostgresStandbyDSN(t), "postgres")
	if err := storeurl.Migrate(t.Context(), standby); !errors.Is(err, sqlstore.ErrStandby) {
		t.Errorf("Migrate of a standby = %v, want ErrStandby", err)
	}
}

// openAdmin opens the database dsn names, closed when the test ends.
func openAdmin(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestMigrateConcurrent: the replicas of a deployment each run migrate at
// once on a database never migrated; every one must succeed.
func TestMigrateConcurrent(t *testing.T) {
	raw := emptySchema(t)
	errs := make(chan error, 6)
	for range cap(errs) {
		go func() { errs <- storeurl.Migrate(t.Context(), raw) }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("Migrate: %v", err)
		}
	}
}

// emptySchema returns the URL of a schema of its own on the test server,
// with no tables, dropped when the test ends.
func emptySchema(t *testing.T) string {
	dsn := testenv.PostgresDSN(t)
	admin := openAdmin(t, dsn)
	schema := fmt.Sprintf("storeurl_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	return postgresURL(t, dsn, "postgres") + "&search_path=" + schema
}
