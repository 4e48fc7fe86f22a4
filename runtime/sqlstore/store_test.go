package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver/drivertest"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// dbs remembers each store's database, for the Corrupt hook.
var dbs = map[circuit.Store]*sql.DB{}

func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			drivertest.Run(t, drivertest.Config{
				Open: func(t *testing.T) circuit.Store {
					s, db := b.newStore(t)
					dbs[s] = db
					t.Cleanup(func() { delete(dbs, s) })
					return s
				},
				Corrupt: func(t *testing.T, s circuit.Store, name string) {
					if _, err := dbs[s].ExecContext(t.Context(), "UPDATE circuits SET state = 'ajar' WHERE name = $1", name); err != nil {
						t.Fatal(err)
					}
				},
				RefuseWrites: refuseWrites(b.dialect, dbs),
			})
		})
	}
}

var policy = circuit.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

func TestCorruptRows(t *testing.T) {
	const name = "billing-api"
	tests := []struct {
		name string
		sql  string // run with $1 = name
	}{
		{"UnknownState", "UPDATE circuits SET state = 'ajar' WHERE name = $1"},
		{"NegativeFailures", "UPDATE circuits SET failure_count = -1 WHERE name = $1"},
		{"FailuresOutOfRange", "UPDATE circuits SET failure_count = 1001 WHERE name = $1"},
		{"ZeroGeneration", "UPDATE circuits SET generation = 0 WHERE name = $1"},
		{"NegativeVersion", "UPDATE circuits SET version = -5 WHERE name = $1"},
		{"BadIncarnation", "UPDATE circuits SET incarnation = 'xyz' WHERE name = $1"},
		{"ClosedWithProbe", "UPDATE circuits SET probe_token = 'abc' WHERE name = $1"},
		{"OpenWithoutDeadline", "UPDATE circuits SET state = 'open' WHERE name = $1"},
	}
	for _, b := range backends {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				s, db := b.newStore(t)
				ctx := t.Context()
				rec := machine.Cleared(nil, name, time.Now(), driver.NewID) // a closed record
				if err := s.Replace(ctx, name, nil, rec); err != nil {
					t.Fatal(err)
				}
				if _, err := db.ExecContext(ctx, tt.sql, name); err != nil {
					t.Fatal(err)
				}
				rec, _, err := s.Load(ctx, name)
				if !errors.Is(err, driver.ErrCorrupt) {
					t.Fatalf("Load = %+v, %v; want an error matching driver.ErrCorrupt", rec, err)
				}
				br := circuit.New(s)
				ran := false
				err = br.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
				var se *circuit.StateError
				if !errors.As(err, &se) || !se.Corrupt() || ran {
					t.Fatalf("Run = %v, ran = %v; want a corrupt StateError and no call", err, ran)
				}
				if err := br.Clear(ctx, name); err != nil {
					t.Fatalf("Clear: %v", err)
				}
			})
		}
	}
	t.Run("sqlite/BadTimeText", func(t *testing.T) {
		s, db := backends[1].newStore(t)
		ctx := t.Context()
		rec := machine.Cleared(nil, name, time.Now(), driver.NewID) // a closed record
		if err := s.Replace(ctx, name, nil, rec); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "UPDATE circuits SET updated_at = 'yesterday' WHERE name = $1", name); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Load(ctx, name); !errors.Is(err, driver.ErrCorrupt) {
			t.Fatalf("Load = %v, want an error matching driver.ErrCorrupt", err)
		}
	})
}

func TestMigrateIsExplicitAndIdempotent(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var dsn string
			if b.dialect == sqlstore.SQLite {
				dsn = "file:" + t.TempDir() + "/c.db?_pragma=busy_timeout(10000)"
			} else {
				dsn = createPostgresEmpty(t)
			}
			db := b.open(t, dsn, nil)
			s, err := sqlstore.New(t.Context(), db, b.dialect)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Load(t.Context(), "billing-api"); err == nil {
				t.Fatal("Load before Migrate succeeded: the table was created implicitly")
			}
			for range 2 {
				if err := s.Migrate(t.Context()); err != nil {
					t.Fatalf("Migrate: %v", err)
				}
			}
			if rec, _, err := s.Load(t.Context(), "billing-api"); rec != nil || err != nil {
				t.Fatalf("Load after Migrate = %+v, %v", rec, err)
			}
		})
	}
}

// TestCheckNotMigrated checks a database never migrated: Check, and New
// with copies, fail with an error that says to run Migrate; after it,
// Check passes.
func TestCheckNotMigrated(t *testing.T) {
	for _, b := range append(backends, cachedPostgres) {
		t.Run(b.name, func(t *testing.T) {
			dsn := "file:" + t.TempDir() + "/c.db?_pragma=busy_timeout(10000)"
			if b.dialect == sqlstore.Postgres {
				dsn = createPostgresEmpty(t)
			}
			db := b.open(t, dsn, nil)
			const want = "sqlstore: table circuits does not exist: run Migrate, on a store New made without WithCopies, or circuitctl migrate"
			if b.cached {
				s, err := sqlstore.New(t.Context(), db, b.dialect, sqlstore.WithCopies(testStall))
				if err == nil {
					s.Close()
				}
				if err == nil || err.Error() != want {
					t.Fatalf("New with copies before Migrate: %v, want %q", err, want)
				}
				return
			}
			s, err := sqlstore.New(t.Context(), db, b.dialect)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Check(t.Context()); err == nil || err.Error() != want {
				t.Fatalf("Check before Migrate: %v, want %q", err, want)
			}
			if err := s.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(t.Context()); err != nil {
				t.Fatalf("Check after Migrate: %v", err)
			}
		})
	}
}

// createPostgresEmpty is createPostgres without the migration.
func createPostgresEmpty(t *testing.T) string {
	t.Helper()
	base := testenv.PostgresDSN(t)
	schema := "circuitgen_test_" + randomHex(6)
	admin := openPostgres(t, base, nil)
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	return base + " search_path=" + schema
}

func TestLoadTime(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s, db := b.newStore(t)
			before := time.Now()
			_, now, err := s.Load(t.Context(), "billing-api")
			if err != nil {
				t.Fatal(err)
			}
			if b.dialect == sqlstore.Postgres {
				var dbNow time.Time
				if err := db.QueryRowContext(t.Context(), "SELECT now()").Scan(&dbNow); err != nil {
					t.Fatal(err)
				}
				if now.After(dbNow) {
					t.Fatalf("Load's time %v is after the database's later now() %v", now, dbNow)
				}
			} else if now.Before(before) || now.After(time.Now()) {
				t.Fatalf("Load's time %v is not the local clock's", now)
			}
		})
	}
}

func TestDialectOf(t *testing.T) {
	tests := []struct {
		driver string
		want   sqlstore.Dialect
		ok     bool
	}{
		{"pgx", sqlstore.Postgres, true},
		{"sqlite", sqlstore.SQLite, true},
		{"mysql", 0, false},
	}
	for _, tt := range tests {
		d, err := sqlstore.DialectOf(tt.driver)
		if d != tt.want || (err == nil) != tt.ok {
			t.Errorf("DialectOf(%q) = %v, %v", tt.driver, d, err)
		}
	}
	if _, err := sqlstore.New(t.Context(), nil, 0); err == nil {
		t.Error("New with no dialect succeeded")
	}
}
