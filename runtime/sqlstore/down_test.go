package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// TestServerDown points the store at a PostgreSQL socket where no server
// listens: every call fails closed with a StateError and does not run.
func TestServerDown(t *testing.T) {
	db := openPostgres(t, "host="+t.TempDir()+" port=5432 user=nobody dbname=none sslmode=disable connect_timeout=2", nil)
	s, err := sqlstore.New(db, sqlstore.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(s)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	calls := 0
	for i := range 3 {
		err := b.Run(ctx, "billing-api", policy, func(context.Context) (circuit.Outcome, error) {
			calls++
			return circuit.Success, nil
		})
		var se *circuit.StateError
		if !errors.As(err, &se) || se.Ran {
			t.Fatalf("call %d with no server = %v, want a StateError before the call", i, err)
		}
		if i == 0 {
			t.Logf("with no server: %v", err)
		}
	}
	if calls != 0 {
		t.Fatalf("%d calls admitted with no server, want 0", calls)
	}
}
