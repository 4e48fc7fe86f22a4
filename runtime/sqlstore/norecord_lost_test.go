package sqlstore_test

import (
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// TestLostRowOfCircuitOpenedWhileHealthyHere: store A (one process, with
// copies) runs healthy calls on a circuit with no row, keeping a copy of
// none. Store B (a second process, its own *sql.DB) fails the circuit
// open: its first failure inserts the row, its third opens it. A makes no
// call meanwhile. The row is then lost (deleted by hand, the table
// truncated). A's next calls must not be admitted as closed: the insert's
// notification, which dropped A's copy of none, told A a row exists, so
// its absence is a loss. (A store without copies hears of no insert: a
// process that only ever found no row cannot tell, RELIABILITY.md.)
func TestLostRowOfCircuitOpenedWhileHealthyHere(t *testing.T) {
	for _, be := range []backend{cachedPostgres} {
		for _, tt := range []struct {
			name string
			lose func(t *testing.T, db *sql.DB, d sqlstore.Dialect, name string)
		}{
			{"Deleted", func(t *testing.T, db *sql.DB, _ sqlstore.Dialect, name string) {
				execute(t, db, "DELETE FROM circuits WHERE name = $1", name)
			}},
			{"Truncated", func(t *testing.T, db *sql.DB, _ sqlstore.Dialect, _ string) {
				execute(t, db, "TRUNCATE circuits") // copies are PostgreSQL's only
			}},
		} {
			t.Run(be.name+"/"+tt.name, func(t *testing.T) {
				dsn := be.create(t)
				sa, db := be.openStore(t, dsn)
				sb, _ := be.openStore(t, dsn)
				ev := &reports{}
				a := circuit.New(sa, circuit.WithObserver(ev))
				b := circuit.New(sb)
				ctx := t.Context()
				const name = "billing-api"
				for range 5 { // healthy: no row
					if err := a.Run(ctx, name, policy, op(circuit.Success)); err != nil {
						t.Fatal(err)
					}
				}
				for range policy.FailureThreshold {
					_ = b.Run(ctx, name, policy, op(circuit.Failure))
				}
				if err := b.Run(ctx, name, policy, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
					t.Fatalf("B's Run on the circuit it opened = %v", err)
				}
				time.Sleep(100 * time.Millisecond) // the insert's notification drops A's copy of none
				tt.lose(t, db, be.dialect, name)
				time.Sleep(100 * time.Millisecond)
				testenv.RequireOneProbe(t, a, name, policy)
				if !ev.has(driver.ErrLost) {
					t.Error("A did not report the loss of the open circuit's row (driver.ErrLost)")
				}
			})
		}
	}
}
