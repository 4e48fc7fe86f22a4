package sqlstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// standbyDSN returns the DSN of the test standby with the search_path of
// dsn (createPostgres's schema), once the standby has replayed its tables.
func standbyDSN(t *testing.T, dsn string) string {
	t.Helper()
	_, schema, _ := strings.Cut(dsn, " search_path=")
	sdsn := testenv.PostgresStandbyDSN(t) + " search_path=" + schema
	db := openPostgres(t, sdsn, nil)
	testenv.WaitFor(t, testenv.LiveWithin, "the standby has the circuits table", func() bool {
		var ok bool
		return db.QueryRowContext(t.Context(), "SELECT to_regclass('circuits') IS NOT NULL").Scan(&ok) == nil && ok
	})
	return sdsn
}

// TestStandbyRefused points stores at a hot standby of a migrated
// database: it answers reads with what it replayed, maybe long ago, and
// refuses LISTEN and writes. New with copies refuses it, Check says so,
// and a store made without copies fails every call with a StateError:
// none is admitted from the standby's rows.
func TestStandbyRefused(t *testing.T) {
	dsn := standbyDSN(t, createPostgres(t))
	ctx := t.Context()
	if _, err := sqlstore.New(ctx, openPostgres(t, dsn, nil), sqlstore.Postgres, sqlstore.WithCopies(testStall)); !errors.Is(err, sqlstore.ErrStandby) {
		t.Errorf("New with copies on a standby: %v, want an error wrapping ErrStandby", err)
	}
	s, err := sqlstore.New(ctx, openPostgres(t, dsn, nil), sqlstore.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); !errors.Is(err, sqlstore.ErrStandby) {
		t.Errorf("Check on a standby: %v, want an error wrapping ErrStandby", err)
	}
	err = circuit.New(s).Run(ctx, "billing-api", policy, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
	if se := (*circuit.StateError)(nil); !errors.As(err, &se) || !errors.Is(err, sqlstore.ErrStandby) {
		t.Fatalf("a call through a store on a standby: %v, want a *circuit.StateError wrapping ErrStandby", err)
	}
}
