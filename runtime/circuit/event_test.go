package circuit_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// events is an EventObserver that keeps what it hears.
type events struct {
	mu  sync.Mutex
	got []circuit.Event
}

func (e *events) ObserveTransition(circuit.Transition) {}

func (e *events) ObserveEvent(ev circuit.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, ev)
}

func (e *events) list() []circuit.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]circuit.Event(nil), e.got...)
}

// TestStateErrorsReported: an EventObserver hears a circuit's first
// StateError at once, then at most one a minute while they go on, each
// circuit on its own.
func TestStateErrorsReported(t *testing.T) {
	obs := &events{}
	b, s, clock := newBreaker(t, circuit.WithObserver(obs))
	s.loadErr = errors.New("disk on fire")
	for range 3 {
		wantStateError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), "load", false)
	}
	got := obs.list()
	if len(got) != 1 {
		t.Fatalf("heard %d events after 3 failed calls, want 1", len(got))
	}
	var se *circuit.StateError
	if got[0].Name != testName || !errors.As(got[0].Err, &se) || se.Op != "load" || !strings.Contains(se.Error(), "disk on fire") {
		t.Fatalf("event = %+v, want the circuit's load StateError", got[0])
	}
	if err := b.Run(t.Context(), "mail-api", pol, mustNotRun(t)); err == nil {
		t.Fatal("a call on a failing store was admitted")
	}
	if got := obs.list(); len(got) != 2 || got[1].Name != "mail-api" {
		t.Fatalf("another circuit's first StateError: heard %+v", got)
	}
	clock.Advance(59 * time.Second)
	_ = b.Run(t.Context(), testName, pol, mustNotRun(t))
	if got := obs.list(); len(got) != 2 {
		t.Fatalf("heard %d events 59s after the first, want still 2", len(got))
	}
	clock.Advance(time.Second)
	_ = b.Run(t.Context(), testName, pol, mustNotRun(t))
	if got := obs.list(); len(got) != 3 || got[2].Name != testName {
		t.Fatalf("a minute after the first: heard %+v, want a third event for %s", got, testName)
	}
}

// notifying is a store that reports problems of its own.
type notifying struct {
	*memStore
	report []func(error)
}

func (n *notifying) Notify(report func(error)) { n.report = append(n.report, report) }

// TestStoreReportsHeard: what a driver.Notifier reports reaches every
// Breaker's EventObservers, and SlogObserver logs it at its level.
func TestStoreReportsHeard(t *testing.T) {
	clock := newClock()
	st := &notifying{memStore: newMemStore(t, clock)}
	obs := &events{}
	var logs bytes.Buffer
	l := slog.New(slog.NewTextHandler(&logs, nil))
	circuit.New(st, circuit.WithObserver(obs), circuit.WithObserver(circuit.SlogObserver(l)))
	if len(st.report) != 1 {
		t.Fatalf("New called Notify %d times, want once", len(st.report))
	}
	st.report[0](fmt.Errorf("%w: the server's dataset id changed", driver.ErrLost))
	st.report[0](fmt.Errorf("%w: appendonly is no", driver.ErrUnsafe))
	got := obs.list()
	if len(got) != 2 || !errors.Is(got[0].Err, driver.ErrLost) || !errors.Is(got[1].Err, driver.ErrUnsafe) || got[0].Name != "" {
		t.Fatalf("heard %+v, want the two reports", got)
	}
	out := logs.String()
	for _, want := range []string{"level=ERROR msg=\"circuit store lost its state", "dataset id changed", "level=WARN msg=\"circuit store setting is unsafe\"", "appendonly is no"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
