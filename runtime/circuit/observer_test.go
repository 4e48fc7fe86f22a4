package circuit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
