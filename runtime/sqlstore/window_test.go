package sqlstore_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// TestWindowFlushRoundTrips checks that the rate rule's counts cost one
// statement per flush on PostgreSQL, not one per call: 250 healthy calls in
// well under FlushEvery flush at most once per driver.FlushBatch calls and
// once at the start.
func TestWindowFlushRoundTrips(t *testing.T) {
	tr := &flushTracer{}
	db := openPostgres(t, createPostgres(t), tr)
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	p := circuit.Policy{FailureRate: 0.5, MinCalls: 20, Window: time.Hour, Cooldown: time.Minute, ProbeLease: time.Second}
	b := circuit.New(s)
	ctx := t.Context()
	if err := b.Run(ctx, "billing-api", p, op(circuit.Success)); err != nil {
		t.Fatal(err)
	}
	tr.n.Store(0)
	const calls = 250
	start := time.Now()
	for range calls {
		if err := b.Run(ctx, "billing-api", p, op(circuit.Success)); err != nil {
			t.Fatal(err)
		}
	}
	flushes := int(tr.n.Load())
	if took := time.Since(start); took < driver.FlushEvery {
		if max := calls/driver.FlushBatch + 1; flushes > max || flushes == 0 {
			t.Errorf("%d calls made %d window flushes, want 1..%d", calls, flushes, max)
		}
		t.Logf("%d calls: %d window flushes in %v", calls, flushes, took)
	}
}

// flushTracer counts the window flushes sent to PostgreSQL.
type flushTracer struct{ n atomic.Int64 }

func (tr *flushTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.Contains(data.SQL, "circuit_share_window") {
		tr.n.Add(1)
	}
	return ctx
}

func (tr *flushTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestWindowRowsCleaned leaves window rows behind the three ways a circuit
// can: it goes quiet, its record is cleared, or its window's span changes.
// Every such row is deleted once it has left its window, by the next flush
// of any circuit.
func TestWindowRowsCleaned(t *testing.T) {
	db := openPostgres(t, createPostgres(t), nil)
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	flush := func(name string, w time.Duration) {
		t.Helper()
		b := driver.Bucket(time.Now(), w)
		if _, err := s.ShareWindow(ctx, name, w, 1, b, []driver.BucketCounts{{Bucket: b, Counts: driver.Counts{Calls: 3, Failures: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(name string) (n int) {
		t.Helper()
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM circuit_windows WHERE name = $1", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	b := circuit.New(s)
	if err := b.Run(ctx, "cleared-api", policy, op(circuit.Success)); err != nil {
		t.Fatal(err)
	}
	flush("quiet-api", time.Second)
	flush("respanned-api", time.Second)
	flush("cleared-api", time.Second)
	// A Clear starts a fresh incarnation, whose window is another epoch:
	// the old epoch's rows count for nothing, and go when their window ends.
	if err := b.Clear(ctx, "cleared-api"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the 1s window's buckets leave it
	flush("respanned-api", 2*time.Second)
	for _, name := range []string{"quiet-api", "cleared-api"} {
		if n := rows(name); n != 0 {
			t.Errorf("%s: %d window rows left after its window, want none", name, n)
		}
	}
	var old int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM circuit_windows WHERE name = 'respanned-api' AND span_ms = 1000").Scan(&old); err != nil {
		t.Fatal(err)
	}
	if old != 0 {
		t.Errorf("%d rows of the span a circuit no longer uses, want none", old)
	}
}
