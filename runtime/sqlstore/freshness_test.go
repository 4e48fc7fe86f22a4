package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/faultproxy"
	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
	"github.com/jackc/pgx/v5"
)

// proxiedDSN returns dsn's database through a fault proxy, and the proxy.
func proxiedDSN(t *testing.T, dsn string) (string, *faultproxy.Proxy) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	network, addr := "tcp", fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	p, err := faultproxy.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	host, port, _ := strings.Cut(p.Addr(), ":")
	return dsn + " host=" + host + " port=" + port, p
}

// watchLate makes healthy calls on name through s while during runs, then
// for two stall bounds more, and returns how many were admitted later than
// the stall bound after during's opening (the time it returns), and when
// the last admitted began after it.
func watchLate(t *testing.T, s *sqlstore.Store, name string, during func() time.Time) (int, time.Duration) {
	t.Helper()
	b := circuit.New(s)
	warm(t, s, b, name, policy)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var a testenv.Admissions
	wg.Add(1)
	go func() {
		defer wg.Done()
		testenv.CallLoop(ctx, b, name, policy, &a)
	}()
	opened := during()
	time.Sleep(2 * testStall)
	cancel()
	wg.Wait()
	return a.Late(opened, testStall)
}

// forceOpen holds name open through a store of its own on dsn and returns
// when its write returned.
func forceOpen(t *testing.T, dsn, name string) time.Time {
	t.Helper()
	s, _ := backends[0].openStore(t, dsn)
	if err := circuit.New(s).ForceOpen(t.Context(), name, time.Minute); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// TestDelayRampEndsCopies puts a link whose delay grows step by step
// between a cached store and the database, on a database where another
// circuit changes every 20 ms, so that notifications never stop: an
// opening made directly while the delay is beyond the stall bound must end
// the copies within the bound.
func TestDelayRampEndsCopies(t *testing.T) {
	dsn := createPostgres(t)
	pdsn, proxy := proxiedDSN(t, dsn)
	s, _ := cachedPostgres.openStore(t, pdsn)
	churn, _ := backends[0].openStore(t, dsn)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		cb := circuit.New(churn)
		for ctx.Err() == nil {
			_ = cb.Run(ctx, "other-api", policy, op(circuit.Failure))
			_ = cb.Run(ctx, "other-api", policy, op(circuit.Success))
			time.Sleep(20 * time.Millisecond)
		}
	}()
	step, every := testStall*3/40, 100*time.Millisecond
	var final time.Duration
	n, last := watchLate(t, s, "billing-api", func() time.Time {
		proxy.Ramp(step, every, 2*testStall)
		opened := forceOpen(t, dsn, "billing-api")
		proxy.Ramp(step, every, 4*testStall)
		final = proxy.Delay()
		return opened
	})
	proxy.SetDelay(0)
	t.Logf("delay %v at the opening, %v at the end; %d calls admitted later than the stall bound %v after it; the last admitted began %v after it",
		2*testStall, final, n, testStall, last.Round(time.Millisecond))
	if n > 0 {
		t.Errorf("%d calls admitted more than the stall bound after the opening", n)
	}
}

// TestTriggerDroppedEndsCopies drops, disables or demotes the notify
// trigger under a listening store, then opens the circuit by a write the
// trigger does not announce: the store must stop serving copies within the
// stall bound, and say why through Notify.
func TestTriggerDroppedEndsCopies(t *testing.T) {
	for _, tt := range []struct{ name, stmt, why string }{
		{"Dropped", "DROP TRIGGER circuitgen_notify ON circuits", "is missing"},
		{"Disabled", "ALTER TABLE circuits DISABLE TRIGGER circuitgen_notify", "is disabled"},
		{"OriginOnly", "ALTER TABLE circuits ENABLE TRIGGER circuitgen_notify", "session_replication_role"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dsn := createPostgres(t)
			s, db := cachedPostgres.openStore(t, dsn)
			reports := make(chan error, 10)
			s.Notify(func(err error) { reports <- err })
			n, last := watchLate(t, s, "billing-api", func() time.Time {
				if _, err := db.ExecContext(t.Context(), tt.stmt); err != nil {
					t.Fatal(err)
				}
				// A write no trigger announces: through a replica's role
				// when the trigger fires only for origin sessions.
				return forceOpenReplica(t, dsn, "billing-api")
			})
			t.Logf("%s: %d calls admitted later than the stall bound after the opening; the last admitted began %v after it", tt.stmt, n, last.Round(time.Millisecond))
			if n > 0 {
				t.Errorf("%d calls admitted more than the stall bound after the opening", n)
			}
			select {
			case err := <-reports:
				t.Logf("reported: %v", err)
				if !errors.Is(err, sqlstore.ErrNoTrigger) || !strings.Contains(err.Error(), "trigger circuitgen_notify on circuits") || !strings.Contains(err.Error(), tt.why) {
					t.Errorf("reported %v, want ErrNoTrigger saying circuitgen_notify %s", err, tt.why)
				}
			case <-time.After(testStall):
				t.Error("nothing reported")
			}
		})
	}
}

// forceOpenReplica is forceOpen by a session whose session_replication_role
// is replica, as logical replication and pg_restore's data loads run: it
// fires only triggers enabled ALWAYS (or REPLICA).
func forceOpenReplica(t *testing.T, dsn, name string) time.Time {
	t.Helper()
	s, _ := backends[0].openStore(t, dsn+" options='-c session_replication_role=replica'")
	if err := circuit.New(s).ForceOpen(t.Context(), name, time.Minute); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// TestReplicaWriteInvalidates opens a circuit from a session in the replica
// role: the trigger fires all the same, and the copy is dropped.
func TestReplicaWriteInvalidates(t *testing.T) {
	dsn := createPostgres(t)
	s, _ := cachedPostgres.openStore(t, dsn)
	n, last := watchLate(t, s, "billing-api", func() time.Time { return forceOpenReplica(t, dsn, "billing-api") })
	if n > 0 {
		t.Errorf("%d calls admitted more than the stall bound after a replica-role opening; the last admitted began %v after it", n, last)
	}
	testenv.WaitFor(t, time.Second, "the copy is dropped", func() bool { return !s.Cached("billing-api") })
}

// TestDisabledTriggerRefused disables the notify trigger before a cached
// store is made: New with copies refuses it, naming the trigger.
func TestDisabledTriggerRefused(t *testing.T) {
	dsn := createPostgres(t)
	db := openPostgres(t, dsn, nil)
	if _, err := db.ExecContext(t.Context(), "ALTER TABLE circuits DISABLE TRIGGER circuitgen_notify"); err != nil {
		t.Fatal(err)
	}
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres, sqlstore.WithCopies(testStall))
	if s != nil {
		_ = s.Close()
	}
	if !errors.Is(err, sqlstore.ErrNoTrigger) || !strings.Contains(fmt.Sprint(err), "disabled") {
		t.Fatalf("New with copies and the trigger disabled = %v, want ErrNoTrigger saying it is disabled", err)
	}
}
