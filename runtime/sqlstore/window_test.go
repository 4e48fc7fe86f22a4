package sqlstore_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

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
