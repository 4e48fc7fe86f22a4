package sqlstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
)

// tracer is a pgx tracer that counts statements sent to PostgreSQL.
type tracer struct {
	mu    sync.Mutex
	stmts []string
}

func (tr *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.stmts = append(tr.stmts, strings.Fields(data.SQL)[0])
	return ctx
}

func (tr *tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// take returns the statements counted since the last take.
func (tr *tracer) take() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	s := tr.stmts
	tr.stmts = nil
	return s
}

var errDown = errors.New("dependency down")

func op(o circuit.Outcome) func(context.Context) (circuit.Outcome, error) {
	return func(context.Context) (circuit.Outcome, error) {
		if o == circuit.Failure {
			return o, errDown
		}
		return o, nil
	}
}

// warm runs healthy calls of the named circuit on b until s keeps a copy
// of its record.
func warm(t testing.TB, s *sqlstore.Store, b *circuit.Breaker, name string, p circuit.Policy) {
	t.Helper()
	for i := 0; !s.Cached(name); i++ {
		if err := b.Run(t.Context(), name, p, op(circuit.Success)); err != nil || i > 100 {
			t.Fatalf("%s: Run %d = %v, copy %v", name, i, err, s.Cached(name))
		}
	}
}

// TestRoundTrips counts the statements (one round trip each, with pgx's
// statement cache warm) that guarded calls and transitions cost on
// PostgreSQL.
func TestRoundTrips(t *testing.T) {
	tr := &tracer{}
	db := openPostgres(t, createPostgres(t), tr)
	s, err := sqlstore.New(t.Context(), db, sqlstore.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	clk := time.Now()
	b := circuit.New(s, circuit.WithClock(func() time.Time { return clk }))
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 2, Cooldown: time.Minute, ProbeLease: 10 * time.Second}
	const name = "billing-api"
	// Warm up: prepare every statement once.
	for _, o := range []circuit.Outcome{circuit.Success, circuit.Failure, circuit.Success} {
		_ = b.Run(ctx, name, p, op(o))
	}
	tr.take()
	steps := []struct {
		what    string
		outcome circuit.Outcome
		advance time.Duration
		want    string
	}{
		{"closed, success, nothing counted", circuit.Success, 0, "SELECT SELECT"},
		{"closed, ignored", circuit.Ignored, 0, "SELECT"},
		{"closed, failure 1 of 2", circuit.Failure, 0, "SELECT SELECT UPDATE"},
		{"closed → open", circuit.Failure, 0, "SELECT SELECT UPDATE"},
		{"open, rejected", circuit.Success, time.Second, "SELECT"},
		{"open → half_open (claim) → closed (probe succeeds)", circuit.Success, time.Minute, "SELECT UPDATE SELECT UPDATE"},
	}
	for _, st := range steps {
		clk = clk.Add(st.advance)
		_ = b.Run(ctx, name, p, op(st.outcome))
		got := strings.Join(tr.take(), " ")
		t.Logf("%-52s %d round trips [%s]", st.what, len(strings.Fields(got)), got)
		if got != st.want {
			t.Errorf("%s: statements [%s], want [%s]", st.what, got, st.want)
		}
	}
}
