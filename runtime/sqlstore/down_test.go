package sqlstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver/drivertest"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// TestServerDown points the store at a PostgreSQL socket where no server
// listens: every call fails closed with a StateError and does not run.
func TestServerDown(t *testing.T) {
	db := openPostgres(t, "host="+t.TempDir()+" port=5432 user=nobody dbname=none sslmode=disable connect_timeout=2", nil)
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres)
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

// TestServerStopped runs guarded calls on a PostgreSQL server of the
// test's own and stops it mid-run (an immediate stop, or a SIGKILL of the
// postmaster, as a crash would):
// the call whose settlement meets the stopped server fails with a
// StateError after the operation ran (taking precedence over, and
// wrapping, the operation's error), and every call after it fails closed
// with a StateError without running. Once the server is back, with its
// records intact, calls work again.
func TestServerStopped(t *testing.T) {
	t.Run("Immediate", func(t *testing.T) { testServerStopped(t, (*pgServer).stop) })
	t.Run("Killed", func(t *testing.T) { testServerStopped(t, (*pgServer).kill) })
}

func testServerStopped(t *testing.T, stop func(*pgServer, *testing.T)) {
	start := time.Now()
	srv := startThrowawayPostgres(t)
	t.Logf("throwaway PostgreSQL up in %v", time.Since(start).Round(time.Millisecond))
	db := openPostgres(t, srv.DSN(), nil)
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	// Every store round trip below is bounded by a context.
	bounded := func() context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	if err := s.Migrate(bounded()); err != nil {
		t.Fatal(err)
	}
	b := circuit.New(s)
	const name = "billing-api"
	if err := b.Run(bounded(), name, policy, op(circuit.Success)); err != nil {
		t.Fatalf("Run with the server up: %v", err)
	}
	if err := b.Run(bounded(), name, policy, op(circuit.Failure)); !errors.Is(err, errDown) {
		t.Fatalf("failing Run with the server up = %v, want its own error", err)
	}
	before, err := b.Snapshot(bounded(), name)
	if err != nil || before.State != circuit.StateClosed || before.Failures != 1 {
		t.Fatalf("Snapshot = %+v, %v; want closed with 1 failure", before, err)
	}

	// The server stops while an operation runs: its settlement (a failure
	// to count) meets the outage after the operation ran.
	drivertest.Outage(t, b, name, bounded, func() { stop(srv, t) })
	if _, err := b.Snapshot(bounded(), name); err == nil {
		t.Fatal("Snapshot with the server stopped succeeded")
	}

	// Back up: the record is as it was before the outage (the failed
	// settlement wrote nothing), and calls are admitted again once the
	// settlement owed is written.
	restart := time.Now()
	srv.start(t)
	t.Logf("restarted (crash recovery) in %v", time.Since(restart).Round(time.Millisecond))
	after, err := b.Snapshot(bounded(), name)
	if err != nil || after != before {
		t.Fatalf("Snapshot after the restart = %+v, %v; want %+v", after, err, before)
	}
	// The failure the outage refused is owed: the first call writes it
	// (threshold 3: 2 failures, still closed), then runs. A try that failed
	// during the outage holds the next one back for a quarter second.
	ran := 0
	run := func() error {
		return b.Run(bounded(), name, policy, func(context.Context) (circuit.Outcome, error) {
			ran++
			return circuit.Success, nil
		})
	}
	err = run()
	for end := time.Now().Add(2 * time.Second); errors.As(err, new(*circuit.StateError)) && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
		err = run()
	}
	if err != nil || ran != 1 {
		t.Fatalf("Run after the restart = %v (ran %d), want it admitted and settled", err, ran)
	}
	if snap, err := b.Snapshot(bounded(), name); err != nil || snap.Failures != 0 || snap.Generation != before.Generation {
		t.Fatalf("Snapshot after a success = %+v, %v; want the count reset in the same generation", snap, err)
	}
}

// TestReadOnlyDatabase opens the store on a session whose transactions
// are read-only (default_transaction_read_only=on, what a hot standby or a
// database made read-only answers), with and without copies. The failure
// whose settlement is refused fails with a StateError after it ran; every
// call after it fails closed without running: a
// store that cannot write never keeps a circuit closed. No loss is
// reported: the refused write changed nothing.
func TestReadOnlyDatabase(t *testing.T) {
	for _, copies := range []bool{false, true} {
		t.Run(map[bool]string{false: "Direct", true: "Copies"}[copies], func(t *testing.T) {
			dsn := createPostgres(t)
			db := openPostgres(t, dsn+" options='-c default_transaction_read_only=on'", nil)
			var opts []sqlstore.Option
			if copies {
				opts = append(opts, sqlstore.WithCopies(testStall))
			}
			s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres, opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			rep := &reports{}
			b := circuit.New(s, circuit.WithObserver(rep))
			ran := 0
			for i := range 10 {
				err := b.Run(t.Context(), "billing-api", policy, func(context.Context) (circuit.Outcome, error) {
					ran++
					return circuit.Failure, errors.New("billing down")
				})
				var se *circuit.StateError
				if !errors.As(err, &se) || se.Ran != (i == 0) {
					t.Fatalf("call %d on a read-only database = %v, want a StateError (Ran only on the first)", i+1, err)
				}
				if i == 0 {
					t.Logf("refused settlement: %v", err)
				}
			}
			if ran != 1 {
				t.Fatalf("%d of 10 calls ran on a read-only database, want 1", ran)
			}
			if n := rep.count(driver.ErrLost); n != 0 {
				t.Fatalf("%d losses reported on a database that refused every write, want 0", n)
			}
		})
	}
}

// TestCopiesOffReported opens a cached store on a read-only session: its
// listening sessions fail on their first write (SQLSTATE 25006), so it
// serves no copy. The store says so once, with the reason, however many
// sessions fail the same way.
func TestCopiesOffReported(t *testing.T) {
	db := openPostgres(t, createPostgres(t)+" options='-c default_transaction_read_only=on'", nil)
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres, sqlstore.WithCopies(testStall))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	rep := &reports{}
	b := circuit.New(s, circuit.WithObserver(rep))
	for end := time.Now().Add(5 * testStall); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if err := b.Run(t.Context(), "billing-api", policy, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if s.Live() {
		t.Fatal("copies live on a read-only database")
	}
	rep.mu.Lock()
	defer rep.mu.Unlock()
	if len(rep.errs) != 1 || !strings.Contains(rep.errs[0].Error(), "copies are off") || !strings.Contains(rep.errs[0].Error(), "25006") {
		t.Fatalf("reports: %v; want one saying copies are off, with SQLSTATE 25006", rep.errs)
	}
}
