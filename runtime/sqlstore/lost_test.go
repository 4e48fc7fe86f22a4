package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// reports is an Observer (with ObserveEvent) that keeps the store's reports.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (r *reports) ObserveTransition(circuit.Transition) {}

func (r *reports) ObserveEvent(e circuit.Event) {
	r.mu.Lock()
	r.errs = append(r.errs, e.Err)
	r.mu.Unlock()
}

// count returns how many reports match target.
func (r *reports) count(target error) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, err := range r.errs {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}

func (r *reports) has(target error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, err := range r.errs {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// rowColumns are the columns a restore puts back.
const rowColumns = "state, failure_count, generation, incarnation, version, open_until, probe_token, lease_until, updated_at, policy_state"

// TestRolledBackRowFailsClosed opens a circuit for a minute, then puts its
// row back as it was while closed, as a restore from a backup (or a
// failover to a replica that had not caught up) does: the store must not
// take the old row for a closed circuit. Eight callers at once get one
// probe, the others are rejected until it succeeds, and driver.ErrLost is
// reported; with copies and without. The row put back is of the circuit's
// incarnation, or of one a Clear ended before the circuit opened.
func TestRolledBackRowFailsClosed(t *testing.T) {
	for _, be := range []backend{backends[0], cachedPostgres} {
		for _, tt := range []struct {
			name    string
			cleared bool // the circuit is cleared after its row is taken, and made anew
		}{{"SameIncarnation", false}, {"ClearedIncarnation", true}} {
			t.Run(be.name+"/"+tt.name, func(t *testing.T) {
				s, db := be.newStore(t)
				ev := &reports{}
				b := circuit.New(s, circuit.WithObserver(ev))
				ctx := t.Context()
				const name = "billing-api"
				if err := b.Clear(ctx, name); err != nil { // a closed row: a healthy call writes none
					t.Fatal(err)
				}
				for range 3 {
					_ = b.Run(ctx, name, policy, op(circuit.Success))
				}
				var backup string
				if err := db.QueryRowContext(ctx, "SELECT row_to_json(c)::text FROM circuits c WHERE name = $1", name).Scan(&backup); err != nil {
					t.Fatal(err)
				}
				if tt.cleared {
					if err := b.Clear(ctx, name); err != nil {
						t.Fatal(err)
					}
					if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil { // a row of another incarnation
						t.Fatal(err)
					}
				}
				if err := b.ForceOpen(ctx, name, time.Minute); err != nil {
					t.Fatal(err)
				}
				if err := b.Run(ctx, name, policy, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
					t.Fatalf("Run on the open circuit = %v", err)
				}
				if _, err := db.ExecContext(ctx, "UPDATE circuits SET ("+rowColumns+") = (SELECT "+rowColumns+
					" FROM json_populate_record(NULL::circuits, $1::json)) WHERE name = $2", backup, name); err != nil {
					t.Fatal(err)
				}
				time.Sleep(100 * time.Millisecond) // the restore's notification drops the copy
				testenv.RequireOneProbe(t, b, name, policy)
				if !ev.has(driver.ErrLost) {
					t.Error("the rollback was not reported as an event wrapping driver.ErrLost")
				}
			})
		}
	}
}

// TestLostRowFailsClosed opens a circuit for a minute, then has the
// database lose its row while processes use it: deleted by hand, the table
// truncated (no row trigger fires), or the database recreated and migrated
// again. A process that found the row and then finds neither a row nor a
// Clear must not take the circuit for closed: one probe, the others
// rejected until it succeeds, and driver.ErrLost reported. A Clear, by
// another process, is no loss: the circuit is closed and nothing is
// reported.
func TestLostRowFailsClosed(t *testing.T) {
	for _, be := range []backend{backends[0], backends[1], cachedPostgres} {
		for _, tt := range []struct {
			name string
			lose func(t *testing.T, db *sql.DB, d sqlstore.Dialect, name string)
		}{
			{"Deleted", func(t *testing.T, db *sql.DB, _ sqlstore.Dialect, name string) {
				execute(t, db, "DELETE FROM circuits WHERE name = $1", name)
			}},
			{"Truncated", func(t *testing.T, db *sql.DB, d sqlstore.Dialect, _ string) {
				if d == sqlstore.Postgres {
					execute(t, db, "TRUNCATE circuits")
				} else {
					execute(t, db, "DELETE FROM circuits")
				}
			}},
			{"Recreated", func(t *testing.T, db *sql.DB, d sqlstore.Dialect, _ string) {
				for _, table := range []string{"circuits", "circuit_clears", "circuit_windows"} {
					execute(t, db, "DROP TABLE "+table)
				}
				migrate(t, db, d)
			}},
		} {
			t.Run(be.name+"/"+tt.name, func(t *testing.T) {
				s, db := be.newStore(t)
				ev := &reports{}
				b := circuit.New(s, circuit.WithObserver(ev))
				ctx := t.Context()
				const name = "billing-api"
				if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil {
					t.Fatal(err)
				}
				if err := b.ForceOpen(ctx, name, time.Minute); err != nil {
					t.Fatal(err)
				}
				if err := b.Run(ctx, name, policy, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
					t.Fatalf("Run on the open circuit = %v", err)
				}
				tt.lose(t, db, be.dialect, name)
				testenv.RequireOneProbe(t, b, name, policy)
				if !ev.has(driver.ErrLost) {
					t.Error("the loss was not reported as an event wrapping driver.ErrLost")
				}
			})
		}
		t.Run(be.name+"/Cleared", func(t *testing.T) {
			dsn := be.create(t)
			s, _ := be.openStore(t, dsn)
			other, _ := be.openStore(t, dsn)
			ev := &reports{}
			b := circuit.New(s, circuit.WithObserver(ev))
			ctx := t.Context()
			const name = "billing-api"
			if err := b.ForceOpen(ctx, name, time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := b.Run(ctx, name, policy, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
				t.Fatalf("Run on the open circuit = %v", err)
			}
			if err := circuit.New(other).Clear(ctx, name); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // the clear's notification drops the copy
			var ran int
			for range 3 {
				if err := b.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) { ran++; return circuit.Success, nil }); err != nil {
					t.Fatalf("a call after another process's Clear = %v", err)
				}
			}
			if ran != 3 || ev.has(driver.ErrLost) {
				t.Errorf("after a Clear: %d of 3 calls ran, ErrLost reported %v; want 3 and no report", ran, ev.has(driver.ErrLost))
			}
		})
	}
}

// TestLostAgainWhileMadeUnknown: the circuit's row deleted by hand over
// and over while four callers find it lost and make it unknown, every probe
// failing. A row lost again between the unknown row's write and the read
// after it must not pass for no row, a new circuit: every call admitted is
// a probe.
func TestLostAgainWhileMadeUnknown(t *testing.T) {
	for _, be := range []backend{backends[0], backends[1], cachedPostgres} {
		t.Run(be.name, func(t *testing.T) {
			s, db := be.newStore(t)
			b := circuit.New(s)
			ctx := t.Context()
			const name = "billing-api"
			if err := b.ForceOpen(ctx, name, time.Minute); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Allow(ctx, name, policy); !errors.Is(err, circuit.ErrOpen) {
				t.Fatalf("Allow on the open circuit = %v", err)
			}
			testenv.RequireNoneClosedWhileLost(t, b, name, policy, func() bool {
				_, err := db.ExecContext(ctx, "DELETE FROM circuits WHERE name = $1", name)
				return err == nil
			})
		})
	}
}

// execute runs a statement on db.
func execute(t *testing.T, db *sql.DB, stmt string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// TestWithoutClearsTable runs the store on a database migrated before
// circuit_clears existed (the table dropped): calls, a Clear and a circuit
// written anew work as they did without it, the missing table is reported
// once as an event wrapping driver.ErrUnsafe that says to run Migrate, and
// after Migrate a new store uses the table again.
func TestWithoutClearsTable(t *testing.T) {
	for _, be := range []backend{backends[0], backends[1]} {
		t.Run(be.name, func(t *testing.T) {
			dsn := be.create(t)
			s, db := be.openStore(t, dsn)
			if be.dialect == sqlstore.SQLite {
				execute(t, db, "DROP TRIGGER circuitgen_unclear")
			}
			execute(t, db, "DROP TABLE circuit_clears")
			ev := &reports{}
			b := circuit.New(s, circuit.WithObserver(ev))
			ctx := t.Context()
			const name = "billing-api"
			for range 3 {
				if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil {
					t.Fatalf("a call without circuit_clears = %v", err)
				}
			}
			if err := b.Clear(ctx, name); err != nil {
				t.Fatalf("Clear without circuit_clears = %v", err)
			}
			if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil {
				t.Fatalf("a call after the Clear = %v", err)
			}
			if !ev.has(driver.ErrUnsafe) || ev.has(driver.ErrLost) {
				t.Errorf("missing table reported %v, a loss reported %v; want the first only", ev.has(driver.ErrUnsafe), ev.has(driver.ErrLost))
			}
			if n := ev.count(driver.ErrUnsafe); n != 1 {
				t.Errorf("the missing table was reported %d times, want once", n)
			}
			migrate(t, db, be.dialect)
			s2, _ := be.openStore(t, dsn)
			ev2 := &reports{}
			b2 := circuit.New(s2, circuit.WithObserver(ev2))
			if err := b2.Run(ctx, name, policy, op(circuit.Success)); err != nil {
				t.Fatal(err)
			}
			execute(t, db, "DELETE FROM circuits WHERE name = $1", name)
			if _, err := b2.Snapshot(ctx, name); err != nil {
				t.Fatal(err)
			}
			if !ev2.has(driver.ErrLost) {
				t.Error("after Migrate, a row deleted by hand was not found lost")
			}
		})
	}
}
