package circuit_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func TestConfigErrorBeforeAnyStoreCall(t *testing.T) {
	tests := []struct {
		name      string
		circuit   string
		p         circuit.Policy
		wantField string
	}{
		{"empty name", "", pol, "name"},
		{"name with a slash", "a/b", pol, "name"},
		{"URL as name", "https://billing.example.test", pol, "name"},
		{"homoglyph name", "b\u0456lling", pol, "name"},
		{"129-byte name", "a" + strings.Repeat("b", 128), pol, "name"},
		{"negative threshold", testName, circuit.Policy{FailureThreshold: -1}, "FailureThreshold"},
		{"threshold too high", testName, circuit.Policy{FailureThreshold: 1001, Cooldown: time.Second, ProbeLease: time.Second}, "FailureThreshold"},
		{"cooldown too short", testName, circuit.Policy{FailureThreshold: 1, Cooldown: time.Millisecond, ProbeLease: time.Second}, "Cooldown"},
		{"lease too long", testName, circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: 2 * time.Hour}, "ProbeLease"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, s, _ := newBreaker(t)
			check := func(what string, err error) {
				t.Helper()
				var ce *circuit.ConfigError
				if !errors.As(err, &ce) || ce.Field != tt.wantField {
					t.Errorf("%s = %v, want a *ConfigError for %s", what, err, tt.wantField)
				}
			}
			check("Run", b.Run(t.Context(), tt.circuit, tt.p, mustNotRun(t)))
			ticket, err := b.Allow(t.Context(), tt.circuit, tt.p)
			check("Allow", err)
			if ticket != nil {
				t.Error("Allow returned a ticket with an error")
			}
			_, err = circuit.Call(t.Context(), b, tt.circuit, tt.p,
				func(int, error) circuit.Outcome { t.Error("classify called"); return circuit.Success },
				func(context.Context) (int, error) { t.Error("the operation was invoked"); return 0, nil })
			check("Call", err)
			if tt.wantField == "name" { // Snapshot and Clear take no policy
				_, err := b.Snapshot(t.Context(), tt.circuit)
				check("Snapshot", err)
				check("Clear", b.Clear(t.Context(), tt.circuit))
			}
			if l, r, d := s.counts(); l+r+d != 0 {
				t.Errorf("the store was called: %d loads, %d replaces, %d deletes", l, r, d)
			}
		})
	}
}

func TestStoreLoadError(t *testing.T) {
	unreachable := errors.New("store unreachable")
	b, s, _ := newBreaker(t)
	_ = b.Run(t.Context(), testName, pol, succeed)
	s.set(func(s *memStore) { s.loadErr = unreachable })

	err := b.Run(t.Context(), testName, pol, mustNotRun(t))
	se := wantStateError(t, err, "load", false)
	if !errors.Is(err, unreachable) || se.CallErr != nil || se.Corrupt() {
		t.Errorf("StateError %+v: want it to wrap the store's error, no CallErr, not corrupt", *se)
	}
	ticket, err := b.Allow(t.Context(), testName, pol)
	if wantStateError(t, err, "load", false); ticket != nil {
		t.Error("Allow returned a ticket with an error")
	}
	_, err = b.Snapshot(t.Context(), testName)
	wantStateError(t, err, "load", false)
}

func TestCorruptRecord(t *testing.T) {
	b, s, _ := newBreaker(t)
	openCircuit(t, b, s, pol)
	s.set(func(s *memStore) { s.corrupt[testName] = true })

	err := b.Run(t.Context(), testName, pol, mustNotRun(t))
	if se := wantStateError(t, err, "load", false); !se.Corrupt() || !errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("StateError %v: want Corrupt()", err)
	}
	if _, err := b.Snapshot(t.Context(), testName); err == nil {
		t.Fatal("Snapshot of a corrupt record succeeded")
	}
	if err := b.Clear(t.Context(), testName); err != nil {
		t.Fatalf("Clear = %v", err)
	}
	calls := 0
	if err := b.Run(t.Context(), testName, pol, counted(&calls, succeed)); err != nil || calls != 1 {
		t.Fatalf("after Clear: Run = %v after %d calls", err, calls)
	}
}

func TestStoreReplaceError(t *testing.T) {
	diskFull := errors.New("disk full")
	upstream := &httpStatusErr{503}

	t.Run("after the operation ran: StateError takes precedence, the op's error stays reachable", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		_ = b.Run(t.Context(), testName, pol, succeed)
		s.set(func(s *memStore) { s.replaceErr = diskFull })
		calls := 0
		err := b.Run(t.Context(), testName, pol, counted(&calls, failing(upstream)))
		if calls != 1 {
			t.Fatalf("the operation ran %d times, want 1", calls)
		}
		se := wantStateError(t, err, "replace", true)
		if se.CallErr != upstream {
			t.Errorf("CallErr = %v, want the operation's error", se.CallErr)
		}
		if !errors.Is(err, diskFull) || !errors.Is(err, upstream) {
			t.Errorf("errors.Is reaches store error: %v, op error: %v; want both", errors.Is(err, diskFull), errors.Is(err, upstream))
		}
		var he *httpStatusErr
		if !errors.As(err, &he) || he != upstream {
			t.Error("errors.As does not reach the operation's error")
		}
		if code, ok := circuit.ErrorStatus(err); !ok || code != 503 {
			t.Errorf("ErrorStatus(err) = %d, %v; want 503 from the operation's error", code, ok)
		}
	})
	t.Run("after a successful operation that had to reset the count", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		_ = b.Run(t.Context(), testName, pol, failing(upstream))
		s.set(func(s *memStore) { s.replaceErr = diskFull })
		err := b.Run(t.Context(), testName, pol, succeed)
		if se := wantStateError(t, err, "replace", true); se.CallErr != nil {
			t.Errorf("CallErr = %v, want nil", se.CallErr)
		}
	})
	t.Run("creating the record on the first failure: StateError after the operation", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		s.set(func(s *memStore) { s.replaceErr = diskFull })
		calls := 0
		err := b.Run(t.Context(), testName, pol, counted(&calls, failing(upstream)))
		if se := wantStateError(t, err, "replace", true); calls != 1 || se.CallErr != upstream || !errors.Is(err, diskFull) {
			t.Errorf("StateError %+v after %d calls", *se, calls)
		}
	})
	t.Run("no record, a healthy call: no write to fail", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		s.set(func(s *memStore) { s.replaceErr = diskFull })
		if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
			t.Errorf("Run = %v, want nil: a healthy call on no record writes nothing", err)
		}
	})
	t.Run("claiming the probe: StateError before the operation", func(t *testing.T) {
		b, s, clock := newBreaker(t)
		openCircuit(t, b, s, pol)
		clock.Advance(pol.Cooldown)
		s.set(func(s *memStore) { s.replaceErr = diskFull })
		wantStateError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), "replace", false)
	})
	t.Run("Done: StateError marked as ran", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		ticket, err := b.Allow(t.Context(), testName, pol)
		if err != nil {
			t.Fatal(err)
		}
		s.set(func(s *memStore) { s.replaceErr = diskFull })
		wantStateError(t, ticket.Done(circuit.Failure), "replace", true)
	})
}

func TestSettleDetachesFromCancellation(t *testing.T) {
	p := circuit.Policy{FailureThreshold: 2, Cooldown: 10 * time.Second, ProbeLease: 5 * time.Second}
	b, s, _ := newBreaker(t)
	_ = b.Run(t.Context(), testName, p, succeed)
	for i := 1; i <= 2; i++ {
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		err := b.Run(ctx, testName, p, func(ctx context.Context) (circuit.Outcome, error) {
			cancel() // the caller's deadline passes while the operation runs
			return circuit.Failure, context.DeadlineExceeded
		})
		if err != context.DeadlineExceeded {
			t.Fatalf("call %d: Run = %v, want the operation's context.DeadlineExceeded", i, err)
		}
		if r := s.rec(testName); r.Failures != i {
			t.Fatalf("call %d: the timed-out failure was not counted: %s", i, fmtRecord(r))
		}
	}
	if r := s.rec(testName); r.State != circuit.StateOpen {
		t.Fatalf("after 2 timed-out failures: %s, want open", fmtRecord(r))
	}

	t.Run("a ctx cancelled before the call admits nothing", func(t *testing.T) {
		b, _, _ := newBreaker(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := b.Run(ctx, testName, p, mustNotRun(t))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled reachable", err)
		}
		if errors.Is(err, circuit.ErrOpen) {
			t.Errorf("Run = %v, a cancelled ctx is not an open circuit", err)
		}
	})
}

func TestConflictsAreRetried(t *testing.T) {
	t.Run("injected conflicts while the first failure creates the record", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		s.set(func(s *memStore) { s.conflicts = 3 })
		boom := errors.New("boom")
		calls := 0
		if err := b.Run(t.Context(), testName, pol, counted(&calls, failing(boom))); err != boom || calls != 1 {
			t.Fatalf("Run = %v after %d calls, want boom after 1", err, calls)
		}
		if _, replaces, _ := s.counts(); replaces != 4 {
			t.Errorf("%d Replace calls, want 3 conflicts and 1 commit", replaces)
		}
		if r := s.rec(testName); r.State != circuit.StateClosed || r.Failures != 1 || r.Version != 1 {
			t.Errorf("record: %s, want closed with 1 failure, version 1", fmtRecord(r))
		}
	})
	t.Run("another process counts a failure between load and replace", func(t *testing.T) {
		b, s, clock := newBreaker(t)
		other := circuit.New(s, circuit.WithClock(clock.Now))
		boom := errors.New("boom")
		_ = b.Run(t.Context(), testName, pol, failing(boom)) // 1 failure
		s.set(func(s *memStore) {
			s.beforeCommit = func() {
				if err := other.Run(t.Context(), testName, pol, failing(boom)); err != boom {
					t.Errorf("the other process's call = %v", err)
				}
			}
		})
		calls := 0
		if err := b.Run(t.Context(), testName, pol, counted(&calls, failing(boom))); err != boom || calls != 1 {
			t.Fatalf("Run = %v after %d calls, want boom after 1", err, calls)
		}
		if r := s.rec(testName); r.Failures != 3 || r.State != circuit.StateOpen {
			t.Fatalf("after 3 failures from two processes: %s, want open with 3 (no update lost)", fmtRecord(r))
		}
	})
	t.Run("another process claims the probe between load and replace", func(t *testing.T) {
		b, s, clock := newBreaker(t)
		openCircuit(t, b, s, pol)
		clock.Advance(pol.Cooldown)
		other := circuit.New(s, circuit.WithClock(clock.Now))
		var otherTicket *circuit.Ticket
		s.set(func(s *memStore) {
			s.beforeCommit = func() {
				var err error
				if otherTicket, err = other.Allow(t.Context(), testName, pol); err != nil {
					t.Errorf("the other process's Allow = %v", err)
				}
			}
		})
		wantOpenError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), circuit.StateHalfOpen)
		if otherTicket == nil || !otherTicket.Probe() {
			t.Fatal("the other process did not get the probe")
		}
	})
	t.Run("endless conflicts give up with a StateError", func(t *testing.T) {
		b, s, clock := newBreaker(t)
		openCircuit(t, b, s, pol)
		clock.Advance(pol.Cooldown)
		s.set(func(s *memStore) { s.conflicts = 1 << 30 })
		wantStateError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), "replace", false)
	})
}

// TestStoreErrorMakesNoCircuitState: with no observer of events, a call a
// failing store refuses makes no state for its circuit. The first refused
// call of each circuit allocates what every later one does; a circuit
// that made its pacing state first would cost a fleet of circuits memory
// for as long as the store is down.
func TestStoreErrorMakesNoCircuitState(t *testing.T) {
	b, s, _ := newBreaker(t)
	s.set(func(s *memStore) { s.loadErr = errors.New("store unreachable") })
	const n = 200
	handles := make([]*circuit.Circuit, n)
	for i := range handles {
		handles[i] = b.Circuit(fmt.Sprintf("c%d", i), pol)
	}
	mallocs := func(f func(c *circuit.Circuit)) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for _, c := range handles {
			f(c)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	call := func(c *circuit.Circuit) { _ = c.Run(t.Context(), mustNotRun(t)) }
	first, later := mallocs(call), mallocs(call)
	if first > later+n/2 {
		t.Errorf("first refused call of %d circuits: %d allocations; later ones: %d", n, first, later)
	}
}
