package sqlstore_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// TestNoTriggerRefused checks that New with copies refuses a database whose
// circuits table has no notify trigger, at once, rather than running
// without copies, silently.
func TestNoTriggerRefused(t *testing.T) {
	dsn := createPostgres(t)
	db := openPostgres(t, dsn, nil)
	if _, err := db.ExecContext(t.Context(), "DROP TRIGGER circuitgen_notify ON circuits"); err != nil {
		t.Fatal(err)
	}
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres, sqlstore.WithCopies(testStall))
	if !errors.Is(err, sqlstore.ErrNoTrigger) {
		if s != nil {
			_ = s.Close()
		}
		t.Fatalf("New with copies without the trigger = %v, want ErrNoTrigger", err)
	}
}

// TestFailingSessionsBackOff checks that a listening connection that keeps
// failing (the trigger dropped after New) is retried ever less often,
// not every quarter of the stall bound.
func TestFailingSessionsBackOff(t *testing.T) {
	dsn := createPostgres(t)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// The listening connection dials as db does.
	var dials atomic.Int32
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = db.Close() })
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres, sqlstore.WithCopies(testStall))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	testenv.WaitFor(t, testenv.LiveWithin, "the listening connection is up", s.Live)
	if _, err := db.ExecContext(t.Context(), "DROP TRIGGER circuitgen_notify ON circuits"); err != nil {
		t.Fatal(err)
	}
	// Kill the listening connection: every session from now on fails.
	if _, err := db.ExecContext(t.Context(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", sqlstore.ListenerName); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, "the connection is lost", func() bool { return !s.Live() })
	start := dials.Load()
	const d = 2 * time.Second // 20 pauses of testStall/4 without backing off
	time.Sleep(d)
	// Pauses of 100, 200, 400, 800 ms... fit 4 sessions in 2 s.
	if n := dials.Load() - start; n > 6 {
		t.Errorf("%d sessions in %v after they began to fail, want them backing off (at most 6)", n, d)
	}
}
