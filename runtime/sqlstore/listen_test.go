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
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
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

// TestListenerLossLosesNoCircuit: a healthy circuit has no row, and the
// store keeps a copy of none. When the listening connection is lost (the
// copies all dropped), the next read still finds no row, and that is no
// loss: nothing said a row was created. No ErrLost is reported, and the
// circuit stays without a row (no unknown record, no probe).
func TestListenerLossLosesNoCircuit(t *testing.T) {
	dsn := createPostgres(t)
	s, db := cachedPostgres.openStore(t, dsn)
	reports := make(chan error, 10)
	s.Notify(func(err error) { reports <- err })
	const name = "billing-api"
	b := circuit.New(s)
	warm(t, s, b, name, policy)
	if _, err := db.ExecContext(t.Context(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", sqlstore.ListenerName); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, "the copies are dropped", func() bool { return !s.Cached(name) })
	if err := b.Run(t.Context(), name, policy, op(circuit.Success)); err != nil {
		t.Fatalf("a healthy call after the listener was lost: %v", err)
	}
	select {
	case err := <-reports:
		if errors.Is(err, driver.ErrLost) {
			t.Fatalf("reported %v for a circuit that never had a row", err)
		}
	default:
	}
	if rec, _, err := s.Load(t.Context(), name); err != nil || rec != nil {
		t.Fatalf("Load = %+v, %v; want no row", rec, err)
	}
}

// TestTruncateLosesNoHealthyCircuit: a cached store keeps a copy of none of
// a healthy circuit with no row; the table is then truncated. The
// TRUNCATE's notice names no row (Cache.InvalidateAll): the healthy
// circuit, which had no row to lose, is neither reported lost nor made to
// probe.
func TestTruncateLosesNoHealthyCircuit(t *testing.T) {
	s, db := cachedPostgres.newStore(t)
	ev := &reports{}
	b := circuit.New(s, circuit.WithObserver(ev))
	ctx := t.Context()
	const name = "billing-api"
	for i := 0; !s.Cached(name); i++ { // healthy: no row, a copy of none
		if err := b.Run(ctx, name, policy, op(circuit.Success)); err != nil || i > 10 {
			t.Fatalf("Run %d = %v, copy %v", i, err, s.Cached(name))
		}
	}
	execute(t, db, "TRUNCATE circuits")
	deadline := time.Now().Add(testStall)
	for s.Cached(name) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	var ran int
	for range 3 {
		if err := b.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) { ran++; return circuit.Success, nil }); err != nil {
			t.Fatalf("a call after the TRUNCATE = %v", err)
		}
	}
	if ran != 3 || ev.has(driver.ErrLost) {
		t.Errorf("after the TRUNCATE: %d of 3 calls ran, ErrLost reported %v; want 3 and no report", ran, ev.has(driver.ErrLost))
	}
}
