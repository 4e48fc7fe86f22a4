package sqlstore_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
	"github.com/jackc/pgx/v5"
)

// TestShareWindow checks the database side of the batched window on every
// backend: flushes add up, buckets that left the window drop out, a new
// epoch starts afresh, and a flush of an earlier generation is not counted.
func TestShareWindow(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			s, _ := bk.newStore(t)
			ctx := t.Context()
			const name, w = "billing-api", time.Minute
			const e1, e2 = 7<<32 | 1, 7<<32 | 2
			add := func(e uint64, b int64, bc ...circuit.BucketCounts) circuit.Counts {
				t.Helper()
				n, err := s.ShareWindow(ctx, name, w, e, b, bc)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			bc := func(b int64, calls, failures uint64) circuit.BucketCounts {
				return circuit.BucketCounts{Bucket: b, Counts: circuit.Counts{Calls: calls, Failures: failures}}
			}
			if got := add(e1, 100, bc(99, 3, 1), bc(100, 2, 2)); got != (circuit.Counts{Calls: 5, Failures: 3}) {
				t.Errorf("first flush = %+v", got)
			}
			if got := add(e1, 100, bc(100, 1, 0)); got != (circuit.Counts{Calls: 6, Failures: 3}) {
				t.Errorf("second flush = %+v", got)
			}
			if got := add(e1, 109); got != (circuit.Counts{Calls: 3, Failures: 2}) {
				t.Errorf("bucket 99 left the window: %+v, want bucket 100's", got)
			}
			if got := add(e2, 109, bc(109, 1, 0)); got != (circuit.Counts{Calls: 1}) {
				t.Errorf("a new generation = %+v, want its own call only", got)
			}
			if got := add(e1, 109, bc(109, 5, 5)); got != (circuit.Counts{}) {
				t.Errorf("a flush of the earlier generation = %+v, want it dropped (and its epoch's sums: none)", got)
			}
			if got := add(e2, 109); got != (circuit.Counts{Calls: 1}) {
				t.Errorf("after a stale flush = %+v, want the current generation's call", got)
			}
		})
	}
}

// TestWindowFlushRoundTrips checks that the rate rule's counts cost one
// statement per flush on PostgreSQL, not one per call: 250 healthy calls in
// well under FlushEvery flush at most once per circuit.FlushBatch calls and
// once at the start.
func TestWindowFlushRoundTrips(t *testing.T) {
	tr := &flushTracer{}
	db := openPostgres(t, createPostgres(t), tr)
	s, err := sqlstore.New(db, sqlstore.Postgres)
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
	if took := time.Since(start); took < circuit.FlushEvery {
		if max := calls/circuit.FlushBatch + 1; flushes > max || flushes == 0 {
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
