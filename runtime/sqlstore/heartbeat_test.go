package sqlstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// TestSharedHeartbeat runs eight busy cached stores on one database: the
// shared heartbeat row is written at most once a quarter of the stall
// bound whatever the number of stores (each store's heartbeat otherwise
// only reads the database's snapshot), and every store, the ones whose
// heartbeats write nothing included, keeps its copies: its calls make
// almost no round trip.
func TestSharedHeartbeat(t *testing.T) {
	dsn := cachedPostgres.create(t)
	const k = 8
	stores := make([]*sqlstore.Store, k)
	tracers := make([]*tracer, k)
	for i := range stores {
		tracers[i] = &tracer{}
		s, err := sqlstore.New(t.Context(), openPostgres(t, dsn, tracers[i]), sqlstore.Postgres, sqlstore.WithCopies(testStall))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores[i] = s
	}
	for _, s := range stores {
		testenv.WaitFor(t, 5*time.Second, "listening", s.Live)
	}
	admin := openPostgres(t, dsn, nil)
	ticks := func() int64 {
		var v int64
		if err := admin.QueryRowContext(t.Context(), "SELECT version FROM circuits WHERE name = '~beat:tick'").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	breakers := make([]*circuit.Breaker, k)
	for i, s := range stores {
		breakers[i] = circuit.New(s)
		for j := 0; !s.Cached("billing-api"); j++ {
			if err := breakers[i].Run(t.Context(), "billing-api", policy, op(circuit.Success)); err != nil || j > 100 {
				t.Fatalf("store %d: Run %d = %v", i, j, err)
			}
		}
		tracers[i].take()
	}
	const during = 2 * time.Second
	v0, start := ticks(), time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), during)
	defer cancel()
	var wg sync.WaitGroup
	calls := make([]testenv.Admissions, k)
	for i, b := range breakers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			testenv.CallLoop(ctx, b, "billing-api", policy, &calls[i])
		}()
	}
	wg.Wait()
	writes := ticks() - v0
	// Eight stores busy for 2 s send about 80 heartbeats (two a bound).
	limit := int64(during/(testStall/4)) + 3
	t.Logf("%d stores, %v: %d writes of the shared heartbeat row (at most %d)", k, during, writes, limit)
	if writes > limit {
		t.Errorf("%d writes of the heartbeat row in %v, want at most %d (one a quarter of the bound)", writes, during, limit)
	}
	// A store whose copies lapse makes a statement a call or more. Under
	// -race on a loaded machine one store's heartbeat is sometimes late
	// (337 statements of 612 calls once, in a cold make test), so each
	// store must make fewer statements than calls, and all of them
	// together at most a fifth.
	var stmts, all int
	for i, tr := range tracers {
		got := tr.take()
		n, _ := calls[i].Late(start.Add(-time.Second), 0)
		t.Logf("store %d: %d calls, %d statements", i, n, len(got))
		if len(got) >= n {
			t.Errorf("store %d: %d statements for %d healthy calls in %v: its copies lapsed", i, len(got), n, during)
		}
		stmts, all = stmts+len(got), all+n
	}
	if stmts > all/5 {
		t.Errorf("%d statements for %d healthy calls of %d stores in %v, want at most a fifth: copies lapsed", stmts, all, k, during)
	}
}
