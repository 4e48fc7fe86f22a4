package redisstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

var errDown = errors.New("dependency down")

// op returns an operation with outcome o.
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
func warm(t testing.TB, s *redisstore.Store, b *circuit.Breaker, name string, p circuit.Policy) {
	t.Helper()
	for i := 0; !s.Cached(name); i++ {
		if err := b.Run(t.Context(), name, p, op(circuit.Success)); err != nil || i > 100 {
			t.Fatalf("%s: Run %d = %v, copy %v", name, i, err, s.Cached(name))
		}
	}
}

// TestRoundTrips counts the commands (one round trip each) that guarded
// calls and transitions cost, with a go-redis hook.
func TestRoundTrips(t *testing.T) {
	c := newClient(t, testenv.RedisURL(t))
	h := &counter{}
	c.AddHook(h)
	s := open(t, c, redisstore.WithPrefix(testPrefix(t, c)))
	clk := time.Now()
	now := func() time.Time { return clk }
	b := circuit.New(s, circuit.WithClock(now))
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 2, Cooldown: time.Minute, ProbeLease: 10 * time.Second}
	const name = "billing-api"

	// Warm up: load the scripts and the connection.
	if err := b.Run(ctx, name, p, op(circuit.Success)); err != nil {
		t.Fatal(err)
	}
	h.take()

	steps := []struct {
		what    string
		outcome circuit.Outcome
		advance time.Duration
		want    []string // commands, in order
		wantErr bool
	}{
		{"closed, success, nothing counted", circuit.Success, 0, []string{"evalsha", "evalsha"}, false},
		{"closed, ignored", circuit.Ignored, 0, []string{"evalsha"}, false},
		{"closed, failure 1 of 2", circuit.Failure, 0, []string{"evalsha", "evalsha", "evalsha"}, true},
		{"closed, success resets the count", circuit.Success, 0, []string{"evalsha", "evalsha", "evalsha"}, false},
		{"closed, failure 1 of 2 again", circuit.Failure, 0, []string{"evalsha", "evalsha", "evalsha"}, true},
		{"closed → open", circuit.Failure, 0, []string{"evalsha", "evalsha", "evalsha"}, true},
		{"open, rejected", circuit.Success, time.Second, []string{"evalsha"}, true},
		{"open → half_open (claim) → closed (probe succeeds)", circuit.Success, time.Minute, []string{"evalsha", "evalsha", "evalsha", "evalsha"}, false},
	}
	for _, st := range steps {
		clk = clk.Add(st.advance)
		err := b.Run(ctx, name, p, op(st.outcome))
		if (err != nil) != st.wantErr {
			t.Fatalf("%s: Run = %v", st.what, err)
		}
		got := h.take()
		t.Logf("%-52s %d round trips %v", st.what, len(got), got)
		if !slices.Equal(got, st.want) {
			t.Errorf("%s: commands %v, want %v", st.what, got, st.want)
		}
	}
}

// TestScriptFlush checks that the store survives SCRIPT FLUSH (or a server
// restart that forgets scripts): EVALSHA answers NOSCRIPT and the script is
// sent again with EVAL.
func TestScriptFlush(t *testing.T) {
	c := newClient(t, testenv.RedisURL(t))
	h := &counter{}
	c.AddHook(h)
	s := open(t, c, redisstore.WithPrefix(testPrefix(t, c)))
	b := circuit.New(s)
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 3, Cooldown: time.Minute, ProbeLease: 10 * time.Second}
	for i := range 3 {
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		h.take()
		if err := b.Run(ctx, "billing-api", p, op(circuit.Failure)); !errors.Is(err, errDown) {
			t.Fatalf("run %d after SCRIPT FLUSH: %v", i, err)
		}
		got := h.take()
		t.Logf("after SCRIPT FLUSH: %v", got)
		if !slices.Contains(got, "eval") {
			t.Errorf("no EVAL after SCRIPT FLUSH: %v", got)
		}
	}
	snap, err := b.Snapshot(ctx, "billing-api")
	if err != nil || snap.State != circuit.StateOpen || snap.Failures != 3 {
		t.Fatalf("after 3 failures across flushes: %+v, %v; want open with 3 failures", snap, err)
	}
	h.take()
	if err := b.Run(ctx, "billing-api", p, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
		t.Fatalf("Run = %v, want the circuit open", err)
	}
	if got := h.take(); !slices.Equal(got, []string{"evalsha"}) {
		t.Errorf("with scripts loaded again: %v, want [evalsha]", got)
	}
}
