package circuit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// callKey marks the caller's context, to check that observers get it.
type callKey struct{}

// callLog is an Observer of calls that writes down what it hears, with the mark
// of the context it heard it with.
type callLog struct{ events []string }

func mark(ctx context.Context) string { s, _ := ctx.Value(callKey{}).(string); return s }

func (l *callLog) ObserveTransition(t circuit.Transition) {
	l.events = append(l.events, fmt.Sprintf("ObserveTransition %v→%v", t.From, t.To))
}

func (l *callLog) ObserveTransitionContext(ctx context.Context, t circuit.Transition) {
	l.events = append(l.events, fmt.Sprintf("%s: %s %v→%v gen %d", mark(ctx), t.Name, t.From, t.To, t.Generation))
}

func (l *callLog) ObserveRejection(ctx context.Context, e *circuit.OpenError) {
	what := "rejected"
	if e.ObserveOnly {
		what = "would reject"
	}
	l.events = append(l.events, fmt.Sprintf("%s: %s %s (%v)", mark(ctx), e.Name, what, e.State))
}

func (l *callLog) ObserveOutcome(ctx context.Context, name string, o circuit.Outcome, d time.Duration) {
	l.events = append(l.events, fmt.Sprintf("%s: %s %v in %v", mark(ctx), name, o, d))
}

func TestCallObserver(t *testing.T) {
	var log callLog
	var plain []string
	b, _, clock := newBreaker(t, circuit.WithObserver(&log),
		circuit.WithObserver(circuit.ObserverFunc(func(tr circuit.Transition) {
			plain = append(plain, fmt.Sprintf("%v→%v", tr.From, tr.To))
		})))
	p := circuit.Policy{FailureThreshold: 2, Cooldown: 10 * time.Second, ProbeLease: 5 * time.Second}
	boom := errors.New("boom")
	call := func(m string) context.Context { return context.WithValue(t.Context(), callKey{}, m) }

	_ = b.Run(call("1"), testName, p, func(context.Context) (circuit.Outcome, error) {
		clock.Advance(250 * time.Millisecond) // the call takes a while
		return circuit.Success, nil
	})
	_ = b.Run(call("2"), testName, p, func(context.Context) (circuit.Outcome, error) { return circuit.Ignored, boom })
	_ = b.Run(call("3"), testName, p, failing(boom))
	_ = b.Run(call("4"), testName, p, failing(boom)) // opens
	_ = b.Run(call("5"), testName, p, succeed)       // rejected
	clock.Advance(10 * time.Second)
	ticket, err := b.Allow(call("6"), testName, p) // claims the probe
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Allow(call("7"), testName, p); !errors.Is(err, circuit.ErrOpen) {
		t.Fatalf("Allow during the probe = %v, want ErrOpen", err)
	}
	clock.Advance(2 * time.Second) // the caller takes this long from Allow to Done
	if err := ticket.Done(circuit.Success); err != nil {
		// closes
		t.Fatal(err)
	}
	func() {
		defer func() { _ = recover() }()
		_ = b.Run(call("9"), testName, p, func(context.Context) (circuit.Outcome, error) { panic("boom") })
	}()
	_ = b.Run(call("10"), "bad name!", p, succeed) // a configuration error: nothing to hear

	want := []string{
		"1: billing-api success in 250ms",
		"2: billing-api ignored in 0s",
		"3: billing-api failure in 0s",
		"4: billing-api failure in 0s",
		"4: billing-api closed→open gen 1",
		"5: billing-api rejected (open)",
		"6: billing-api open→half_open gen 1",
		"7: billing-api rejected (half_open)",
		"6: billing-api success in 2s",
		"6: billing-api half_open→closed gen 2",
		"9: billing-api ignored in 0s",
	}
	if !slices.Equal(log.events, want) {
		t.Errorf("the Observer heard:\n%q\nwant:\n%q", log.events, want)
	}
	if w := []string{"closed→open", "open→half_open", "half_open→closed"}; !slices.Equal(plain, w) {
		t.Errorf("the plain observer heard %q, want %q", plain, w)
	}
}

func TestObservers(t *testing.T) {
	var mu sync.Mutex
	var got []circuit.Transition
	var s *memStore
	obs := circuit.ObserverFunc(func(tr circuit.Transition) {
		// Heard after the commit: the store already holds the new state.
		if r := s.rec(tr.Name); r == nil || r.State != tr.To || r.Generation != tr.Generation {
			t.Errorf("transition %v→%v heard before it was stored (store: %s)", tr.From, tr.To, fmtRecord(r))
		}
		mu.Lock()
		got = append(got, tr)
		mu.Unlock()
	})
	var second atomic.Int32
	b, s, clock := newBreaker(t, circuit.WithObserver(obs),
		circuit.WithObserver(circuit.ObserverFunc(func(circuit.Transition) { second.Add(1) })))
	p := circuit.Policy{FailureThreshold: 2, Cooldown: 10 * time.Second, ProbeLease: 5 * time.Second}
	boom := errors.New("boom")

	_ = b.Run(t.Context(), testName, p, succeed)       // creates the record: no transition
	_ = b.Run(t.Context(), testName, p, failing(boom)) // counts: no transition
	_ = b.Run(t.Context(), testName, p, failing(boom)) // closed → open at t0
	clock.Advance(10 * time.Second)
	_ = b.Run(t.Context(), testName, p, failing(boom)) // open → half_open → open at t0+10s
	clock.Advance(10 * time.Second)
	_ = b.Run(t.Context(), testName, p, succeed) // open → half_open → closed at t0+20s

	at := func(d time.Duration) time.Time { return t0.Add(d) }
	want := []circuit.Transition{
		{Name: testName, From: circuit.StateClosed, To: circuit.StateOpen, Generation: 1, Failures: 2, At: at(0)},
		{Name: testName, From: circuit.StateOpen, To: circuit.StateHalfOpen, Generation: 1, Failures: 2, At: at(10 * time.Second)},
		{Name: testName, From: circuit.StateHalfOpen, To: circuit.StateOpen, Generation: 1, Failures: 3, At: at(10 * time.Second)},
		{Name: testName, From: circuit.StateOpen, To: circuit.StateHalfOpen, Generation: 1, Failures: 3, At: at(20 * time.Second)},
		{Name: testName, From: circuit.StateHalfOpen, To: circuit.StateClosed, Generation: 2, Failures: 0, At: at(20 * time.Second)},
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("heard %d transitions, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("transition %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := second.Load(); int(n) != len(want) {
		t.Errorf("the second observer heard %d transitions, want %d", n, len(want))
	}
}

func TestObserverNotCalledOnFailedCommit(t *testing.T) {
	heard := 0
	b, s, _ := newBreaker(t, circuit.WithObserver(circuit.ObserverFunc(func(circuit.Transition) { heard++ })))
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second}
	_ = b.Run(t.Context(), testName, p, succeed)
	s.set(func(s *memStore) { s.replaceErr = errors.New("disk full") })
	_ = b.Run(t.Context(), testName, p, failing(errors.New("boom")))
	if heard != 0 {
		t.Errorf("observers heard %d transitions that were never stored", heard)
	}
}

func TestSlogObserver(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, s, clock := newBreaker(t, circuit.WithObserver(circuit.SlogObserver(logger)))
	p := circuit.Policy{FailureThreshold: 2, Cooldown: 10 * time.Second, ProbeLease: 5 * time.Second}
	openCircuit(t, b, s, p)
	clock.Advance(10 * time.Second)
	_ = b.Run(t.Context(), testName, p, succeed)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := [][]string{
		{"level=WARN", `msg="circuit open"`, "circuit=billing-api", "from=closed", "to=open", "generation=1", "failures=2", "at=2030-01-02T03:04:05.000Z"},
		{"level=INFO", `msg="circuit half_open"`, "circuit=billing-api", "from=open", "to=half_open", "generation=1", "failures=2", "at=2030-01-02T03:04:15.000Z"},
		{"level=INFO", `msg="circuit closed"`, "circuit=billing-api", "from=half_open", "to=closed", "generation=2", "failures=0", "at=2030-01-02T03:04:15.000Z"},
	}
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, parts := range want {
		for _, part := range parts {
			if !strings.Contains(lines[i], part) {
				t.Errorf("line %d = %q, want it to contain %q", i, lines[i], part)
			}
		}
	}
}
