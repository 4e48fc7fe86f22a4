package circuit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

type op = func(context.Context) (circuit.Outcome, error)

func succeed(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }

func failing(err error) op {
	return func(context.Context) (circuit.Outcome, error) { return circuit.Failure, err }
}

func ignoring(err error) op {
	return func(context.Context) (circuit.Outcome, error) { return circuit.Ignored, err }
}

func mustNotRun(t *testing.T) op {
	return func(context.Context) (circuit.Outcome, error) {
		t.Error("the operation was invoked")
		return circuit.Success, nil
	}
}

// counted returns an op that counts its invocations and then behaves as o.
func counted(n *int, o op) op {
	return func(ctx context.Context) (circuit.Outcome, error) {
		*n++
		return o(ctx)
	}
}

func newBreaker(t *testing.T, opts ...circuit.Option) (*circuit.Breaker, *memStore, *testenv.Clock) {
	t.Helper()
	clock := newClock()
	s := newMemStore(t, clock)
	return circuit.New(s, append([]circuit.Option{circuit.WithClock(clock.Now)}, opts...)...), s, clock
}

// openCircuit runs pol.FailureThreshold failing calls, leaving the circuit
// open until clock.Now()+pol.Cooldown.
func openCircuit(t *testing.T, b *circuit.Breaker, s *memStore, p circuit.Policy) {
	t.Helper()
	boom := errors.New("boom")
	for range p.FailureThreshold {
		if err := b.Run(t.Context(), testName, p, failing(boom)); !errors.Is(err, boom) {
			t.Fatalf("failing call = %v, want %v", err, boom)
		}
	}
	if r := s.rec(testName); r == nil || r.State != circuit.StateOpen {
		t.Fatalf("after %d failures: %s, want open", p.FailureThreshold, fmtRecord(r))
	}
}

func wantOpenError(t *testing.T, err error, state circuit.State) *circuit.OpenError {
	t.Helper()
	var oe *circuit.OpenError
	if !errors.As(err, &oe) {
		t.Fatalf("err = %v, want *circuit.OpenError", err)
	}
	if oe.State != state {
		t.Errorf("OpenError.State = %v, want %v", oe.State, state)
	}
	if oe.Name != testName {
		t.Errorf("OpenError.Name = %q, want %q", oe.Name, testName)
	}
	return oe
}

func wantStateError(t *testing.T, err error, op string, ran bool) *circuit.StateError {
	t.Helper()
	var se *circuit.StateError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *circuit.StateError", err)
	}
	if se.Op != op || se.Ran != ran || se.Name != testName {
		t.Errorf("StateError{Name %q Op %q Ran %v}, want {%q %q %v}", se.Name, se.Op, se.Ran, testName, op, ran)
	}
	return se
}

type ctxKey struct{}

func TestRunHappyPath(t *testing.T) {
	b, s, _ := newBreaker(t)
	ctx := context.WithValue(t.Context(), ctxKey{}, "caller")
	calls := 0
	err := b.Run(ctx, testName, pol, func(got context.Context) (circuit.Outcome, error) {
		calls++
		if got != ctx {
			t.Error("the operation did not get the caller's ctx itself")
		}
		return circuit.Success, nil
	})
	if err != nil || calls != 1 {
		t.Fatalf("Run = %v with %d calls, want nil with 1", err, calls)
	}
	if _, replaces, _ := s.counts(); replaces != 0 {
		t.Fatalf("the first healthy call made %d Replace calls, want none: a circuit gets a record when an outcome changes something", replaces)
	}

	_, replaces, _ := s.counts()
	if err := b.Run(ctx, testName, pol, succeed); err != nil {
		t.Fatal(err)
	}
	if _, after, _ := s.counts(); after != replaces {
		t.Errorf("a success in a healthy closed circuit wrote %d times", after-replaces)
	}

	t.Run("returns the operation's own error unchanged", func(t *testing.T) {
		own := &httpStatusErr{404}
		if err := b.Run(ctx, testName, pol, ignoring(own)); err != own {
			t.Errorf("Run = %#v, want the operation's error itself", err)
		}
		if err := b.Run(ctx, testName, pol, func(context.Context) (circuit.Outcome, error) { return circuit.Success, own }); err != own {
			t.Errorf("Run = %#v, want the operation's error itself", err)
		}
	})
}

func TestRunThresholdOpens(t *testing.T) {
	b, s, clock := newBreaker(t)
	boom := errors.New("boom")
	for i := 1; i <= 3; i++ {
		if err := b.Run(t.Context(), testName, pol, failing(boom)); err != boom {
			t.Fatalf("failure %d: Run = %v, want the operation's error", i, err)
		}
		r := s.rec(testName)
		if r.Failures != i {
			t.Fatalf("after failure %d: %s", i, fmtRecord(r))
		}
		want := circuit.StateClosed
		if i == 3 {
			want = circuit.StateOpen
		}
		if r.State != want {
			t.Fatalf("after failure %d: state %v, want %v", i, r.State, want)
		}
	}
	if r := s.rec(testName); !r.OpenUntil.Equal(t0.Add(pol.Cooldown)) {
		t.Errorf("OpenUntil = %s, want t0+30s", fmtTime(r.OpenUntil))
	}
	clock.Advance(10 * time.Second)
	_, replaces, _ := s.counts()
	oe := wantOpenError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), circuit.StateOpen)
	if oe.RetryAfter() != 20*time.Second || oe.RetryAfterSeconds() != 20 {
		t.Errorf("RetryAfter = %v (%ds), want 20s", oe.RetryAfter(), oe.RetryAfterSeconds())
	}
	if _, after, _ := s.counts(); after != replaces {
		t.Error("a rejected call wrote the record")
	}
}

func TestRunIgnoredConsumesNothing(t *testing.T) {
	b, s, _ := newBreaker(t)
	boom, other := errors.New("boom"), errors.New("not selected")
	for range 2 {
		_ = b.Run(t.Context(), testName, pol, failing(boom))
	}
	_, replaces, _ := s.counts()
	for range 5 {
		if err := b.Run(t.Context(), testName, pol, ignoring(other)); err != other {
			t.Fatalf("Run = %v, want the unselected error unchanged", err)
		}
	}
	if _, after, _ := s.counts(); after != replaces {
		t.Errorf("ignored calls wrote the record %d times", after-replaces)
	}
	if r := s.rec(testName); r.Failures != 2 || r.State != circuit.StateClosed {
		t.Fatalf("after ignored calls: %s, want closed with 2 failures", fmtRecord(r))
	}
	_ = b.Run(t.Context(), testName, pol, failing(boom))
	if r := s.rec(testName); r.State != circuit.StateOpen {
		t.Fatalf("ignored calls reset the count: %s", fmtRecord(r))
	}
}

func TestRunSuccessResetsCount(t *testing.T) {
	b, s, _ := newBreaker(t)
	boom := errors.New("boom")
	for range 2 {
		_ = b.Run(t.Context(), testName, pol, failing(boom))
	}
	if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
		t.Fatal(err)
	}
	if r := s.rec(testName); r.Failures != 0 {
		t.Fatalf("after a success: %s, want 0 failures", fmtRecord(r))
	}
	for range 2 {
		_ = b.Run(t.Context(), testName, pol, failing(boom))
	}
	if r := s.rec(testName); r.State != circuit.StateClosed {
		t.Fatalf("failures before the success still counted: %s", fmtRecord(r))
	}
}

func TestRunProbe(t *testing.T) {
	boom, other := errors.New("boom"), errors.New("not selected")
	tests := []struct {
		name         string
		op           op
		wantErr      error
		wantState    circuit.State
		wantFailures int
		wantGen      uint64
	}{
		{"success closes with a new generation", succeed, nil, circuit.StateClosed, 0, 2},
		{"failure reopens and counts", failing(boom), boom, circuit.StateOpen, 4, 1},
		{"ignored reopens without counting", ignoring(other), other, circuit.StateOpen, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, s, clock := newBreaker(t)
			openCircuit(t, b, s, pol)
			clock.Advance(pol.Cooldown - time.Nanosecond)
			wantOpenError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), circuit.StateOpen)
			clock.Advance(time.Nanosecond)
			calls := 0
			if err := b.Run(t.Context(), testName, pol, counted(&calls, tt.op)); err != tt.wantErr || calls != 1 {
				t.Fatalf("probe: Run = %v after %d calls, want %v after 1", err, calls, tt.wantErr)
			}
			r := s.rec(testName)
			if r.State != tt.wantState || r.Failures != tt.wantFailures || r.Generation != tt.wantGen {
				t.Fatalf("after the probe: %s, want %v failures=%d gen=%d", fmtRecord(r), tt.wantState, tt.wantFailures, tt.wantGen)
			}
			if tt.wantState == circuit.StateOpen {
				if !r.OpenUntil.Equal(clock.Now().Add(pol.Cooldown)) {
					t.Errorf("reopened until %s, want now+Cooldown", fmtTime(r.OpenUntil))
				}
				wantOpenError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), circuit.StateOpen)
			} else if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
				t.Errorf("call after recovery = %v", err)
			}
		})
	}
}

func TestRunOneProbeAmongConcurrentCallers(t *testing.T) {
	const callers, episodes = 32, 20
	b, s, clock := newBreaker(t)
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: 10 * time.Second}
	for episode := range episodes {
		openCircuit(t, b, s, p)
		clock.Advance(p.Cooldown)

		var ran atomic.Int32
		release := make(chan struct{})
		start := make(chan struct{})
		results := make(chan error, callers)
		for range callers {
			go func() {
				<-start
				results <- b.Run(t.Context(), testName, p, func(context.Context) (circuit.Outcome, error) {
					if ran.Add(1) == 1 {
						<-release // hold the probe until everyone else has been answered
					}
					return circuit.Success, nil
				})
			}()
		}
		close(start)
		var errs []error
		for range callers - 1 {
			errs = append(errs, <-results)
		}
		close(release)
		errs = append(errs, <-results)

		var admitted, rejected int
		for _, err := range errs {
			var oe *circuit.OpenError
			switch {
			case err == nil:
				admitted++
			case errors.As(err, &oe) && oe.State == circuit.StateHalfOpen:
				rejected++
			default:
				t.Errorf("episode %d: unexpected error %v", episode, err)
			}
		}
		if n := ran.Load(); n != 1 || admitted != 1 || rejected != callers-1 {
			t.Fatalf("episode %d: the operation ran %d times; %d admitted, %d rejected; want 1, 1, %d",
				episode, n, admitted, rejected, callers-1)
		}
		r := s.rec(testName)
		if r.State != circuit.StateClosed || r.Generation != uint64(episode+2) {
			t.Fatalf("episode %d: after the probe: %s, want closed in generation %d", episode, fmtRecord(r), episode+2)
		}
	}
}

func TestCrashedProbeHoldsItsLease(t *testing.T) {
	b, s, clock := newBreaker(t)
	openCircuit(t, b, s, pol)
	clock.Advance(pol.Cooldown)
	crashed, err := b.Allow(t.Context(), testName, pol)
	if err != nil || !crashed.Probe() {
		t.Fatalf("Allow = %v, %v; want the probe", crashed, err)
	}
	// Never settled: others are rejected until the lease ends.
	clock.Advance(pol.ProbeLease - time.Nanosecond)
	oe := wantOpenError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), circuit.StateHalfOpen)
	if oe.RetryAfter() != time.Second {
		t.Errorf("RetryAfter = %v, want the 1s minimum", oe.RetryAfter())
	}
	clock.Advance(time.Nanosecond)
	second, err := b.Allow(t.Context(), testName, pol)
	if err != nil || !second.Probe() {
		t.Fatalf("Allow after the lease = %v, %v; want a new probe", second, err)
	}
	// The crashed probe wakes up late: its token is no longer current.
	if err := crashed.Done(circuit.Success); err != nil {
		t.Fatal(err)
	}
	if r := s.rec(testName); r.State != circuit.StateHalfOpen {
		t.Fatalf("a stale probe settled: %s", fmtRecord(r))
	}
	if err := second.Done(circuit.Success); err != nil {
		t.Fatal(err)
	}
	if r := s.rec(testName); r.State != circuit.StateClosed || r.Generation != 2 {
		t.Fatalf("after the second probe: %s", fmtRecord(r))
	}
}

func TestStaleCallsChangeNothing(t *testing.T) {
	t.Run("admitted in an earlier generation, fails after recovery", func(t *testing.T) {
		b, s, clock := newBreaker(t)
		_ = b.Run(t.Context(), testName, pol, succeed)
		old, err := b.Allow(t.Context(), testName, pol)
		if err != nil {
			t.Fatal(err)
		}
		openCircuit(t, b, s, pol)
		clock.Advance(pol.Cooldown)
		if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
			t.Fatal(err)
		}
		before := s.rec(testName)
		if err := old.Done(circuit.Failure); err != nil {
			t.Fatal(err)
		}
		if r := s.rec(testName); !driver.SameRevision(r, before) || r.Failures != 0 {
			t.Fatalf("a call from generation 1 changed %s into %s", fmtRecord(before), fmtRecord(r))
		}
	})
	t.Run("admitted while closed, completes while open", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		_ = b.Run(t.Context(), testName, pol, succeed)
		inFlight, _ := b.Allow(t.Context(), testName, pol)
		openCircuit(t, b, s, pol)
		before := s.rec(testName)
		if err := inFlight.Done(circuit.Success); err != nil {
			t.Fatal(err)
		}
		if r := s.rec(testName); !driver.SameRevision(r, before) {
			t.Fatalf("a closed-admitted success changed %s into %s", fmtRecord(before), fmtRecord(r))
		}
	})
	t.Run("admitted before a Clear", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		_ = b.Run(t.Context(), testName, pol, succeed)
		old, _ := b.Allow(t.Context(), testName, pol)
		if err := b.Clear(t.Context(), testName); err != nil {
			t.Fatal(err)
		}
		_ = b.Run(t.Context(), testName, pol, succeed)
		if err := old.Done(circuit.Failure); err != nil {
			t.Fatal(err)
		}
		if r := s.rec(testName); r.Failures != 0 {
			t.Fatalf("a call admitted before Clear counted: %s", fmtRecord(r))
		}
	})
}

func TestRunPanic(t *testing.T) {
	type sentinel struct{ msg string }
	panicking := func(context.Context) (circuit.Outcome, error) { panic(sentinel{"kaboom"}) }
	runRecovering := func(b *circuit.Breaker, p circuit.Policy) (recovered any) {
		defer func() { recovered = recover() }()
		_ = b.Run(t.Context(), testName, p, panicking)
		return nil
	}

	t.Run("closed: settles as ignored and re-panics", func(t *testing.T) {
		b, s, _ := newBreaker(t)
		_ = b.Run(t.Context(), testName, pol, failing(errors.New("boom")))
		before := s.rec(testName)
		if got := runRecovering(b, pol); got != (sentinel{"kaboom"}) {
			t.Fatalf("recovered %v, want the operation's panic value", got)
		}
		if r := s.rec(testName); !driver.SameRevision(r, before) || r.Failures != 1 {
			t.Fatalf("a panic changed %s into %s", fmtRecord(before), fmtRecord(r))
		}
	})
	t.Run("probe: reopens without counting and re-panics", func(t *testing.T) {
		b, s, clock := newBreaker(t)
		openCircuit(t, b, s, pol)
		clock.Advance(pol.Cooldown + time.Second)
		if got := runRecovering(b, pol); got != (sentinel{"kaboom"}) {
			t.Fatalf("recovered %v, want the operation's panic value", got)
		}
		r := s.rec(testName)
		if r.State != circuit.StateOpen || r.Failures != 3 || r.Generation != 1 || !r.OpenUntil.Equal(clock.Now().Add(pol.Cooldown)) {
			t.Fatalf("after a panicking probe: %s, want open for a new cooldown with 3 failures", fmtRecord(r))
		}
		wantOpenError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), circuit.StateOpen)
	})
	t.Run("probe panics after its ctx was cancelled: still reopens", func(t *testing.T) {
		b, s, clock := newBreaker(t)
		openCircuit(t, b, s, pol)
		clock.Advance(pol.Cooldown)
		ctx, cancel := context.WithCancel(t.Context())
		func() {
			defer func() { _ = recover() }()
			_ = b.Run(ctx, testName, pol, func(context.Context) (circuit.Outcome, error) {
				cancel()
				panic("late")
			})
		}()
		if r := s.rec(testName); r.State != circuit.StateOpen {
			t.Fatalf("after a panicking probe with a cancelled ctx: %s, want open", fmtRecord(r))
		}
	})
}

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

func TestAllowDone(t *testing.T) {
	b, s, clock := newBreaker(t)
	ticket, err := b.Allow(t.Context(), testName, pol)
	if err != nil || ticket.Probe() {
		t.Fatalf("Allow = %v, %v; want a closed ticket", ticket, err)
	}
	if err := ticket.Done(circuit.Failure); err != nil {
		t.Fatal(err)
	}
	_, replaces, _ := s.counts()
	for _, o := range []circuit.Outcome{circuit.Failure, circuit.Success, circuit.Failure} {
		if err := ticket.Done(o); err != nil {
			t.Fatalf("second Done(%v) = %v", o, err)
		}
	}
	if _, after, _ := s.counts(); after != replaces {
		t.Errorf("Done after the first wrote %d times", after-replaces)
	}
	if r := s.rec(testName); r.Failures != 1 {
		t.Fatalf("after Done twice: %s, want 1 failure", fmtRecord(r))
	}

	for range 2 {
		tk, err := b.Allow(t.Context(), testName, pol)
		if err != nil {
			t.Fatal(err)
		}
		_ = tk.Done(circuit.Failure)
	}
	if _, err := b.Allow(t.Context(), testName, pol); err == nil {
		t.Fatal("Allow on an open circuit admitted the call")
	} else {
		wantOpenError(t, err, circuit.StateOpen)
	}

	clock.Advance(pol.Cooldown)
	probe, err := b.Allow(t.Context(), testName, pol)
	if err != nil || !probe.Probe() {
		t.Fatalf("Allow after cooldown = %v, %v; want the probe", probe, err)
	}
	if err := probe.Done(circuit.Success); err != nil {
		t.Fatal(err)
	}
	if r := s.rec(testName); r.State != circuit.StateClosed || r.Generation != 2 {
		t.Fatalf("after the probe's Done: %s", fmtRecord(r))
	}

	t.Run("Done settles even after Allow's ctx ended", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		tk, err := b.Allow(ctx, testName, pol)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := tk.Done(circuit.Failure); err != nil {
			t.Fatalf("Done = %v", err)
		}
		if r := s.rec(testName); r.Failures != 1 {
			t.Fatalf("the failure was not counted: %s", fmtRecord(r))
		}
	})
}

func TestCall(t *testing.T) {
	b, s, _ := newBreaker(t)
	isFailure := func(v int, err error) circuit.Outcome {
		switch {
		case err != nil:
			return circuit.Failure
		case v >= 500:
			return circuit.Failure
		}
		return circuit.Success
	}
	v, err := circuit.Call(t.Context(), b, testName, pol, isFailure, func(context.Context) (int, error) { return 200, nil })
	if v != 200 || err != nil {
		t.Fatalf("Call = %d, %v; want 200, nil", v, err)
	}
	boom := errors.New("boom")
	v, err = circuit.Call(t.Context(), b, testName, pol, isFailure, func(context.Context) (int, error) { return 7, boom })
	if v != 7 || err != boom {
		t.Fatalf("Call = %d, %v; want 7, boom", v, err)
	}
	var seen int
	classify := func(v int, err error) circuit.Outcome { seen = v; return isFailure(v, err) }
	v, err = circuit.Call(t.Context(), b, testName, pol, classify, func(context.Context) (int, error) { return 503, nil })
	if v != 503 || err != nil || seen != 503 {
		t.Fatalf("Call = %d, %v (classify saw %d); want 503, nil, 503", v, err, seen)
	}
	if r := s.rec(testName); r.Failures != 2 {
		t.Fatalf("after a failing error and a failing result: %s, want 2 failures", fmtRecord(r))
	}
	_, _ = circuit.Call(t.Context(), b, testName, pol, isFailure, func(context.Context) (int, error) { return 500, nil })
	v, err = circuit.Call(t.Context(), b, testName, pol, isFailure, func(context.Context) (int, error) {
		t.Error("the operation was invoked on an open circuit")
		return 1, nil
	})
	if v != 0 {
		t.Errorf("Call on an open circuit returned %d, want the zero value", v)
	}
	wantOpenError(t, err, circuit.StateOpen)

	t.Run("any result type", func(t *testing.T) {
		b, _, _ := newBreaker(t)
		type resp struct{ body string }
		r, err := circuit.Call(t.Context(), b, testName, pol,
			func(*resp, error) circuit.Outcome { return circuit.Success },
			func(context.Context) (*resp, error) { return &resp{"ok"}, nil })
		if err != nil || r == nil || r.body != "ok" {
			t.Fatalf("Call = %v, %v", r, err)
		}
	})
}

func TestSnapshot(t *testing.T) {
	b, s, clock := newBreaker(t)
	snap, err := b.Snapshot(t.Context(), testName)
	if err != nil {
		t.Fatal(err)
	}
	if snap != (circuit.Snapshot{Name: testName, State: circuit.StateClosed}) {
		t.Errorf("Snapshot of an absent circuit = %+v", snap)
	}

	openCircuit(t, b, s, pol)
	clock.Advance(time.Hour) // long past the cooldown
	_, replaces, _ := s.counts()
	for range 3 {
		snap, err = b.Snapshot(t.Context(), testName)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, after, _ := s.counts(); after != replaces {
		t.Fatalf("Snapshot wrote the record %d times", after-replaces)
	}
	// The cooldown is over: the circuit reads half-open, ready to probe,
	// though its record still says open.
	want := circuit.Snapshot{Name: testName, State: circuit.StateHalfOpen, Failures: 3, Generation: 1,
		OpenUntil: t0.Add(pol.Cooldown), UpdatedAt: t0, Exists: true}
	if snap != want {
		t.Errorf("Snapshot =\n  %+v\nwant\n  %+v", snap, want)
	}
	if r := s.rec(testName); r.State != circuit.StateOpen {
		t.Errorf("the record is %s, want it still open", fmtRecord(r))
	}
	// Snapshot did not claim the probe: the next call does.
	probe, err := b.Allow(t.Context(), testName, pol)
	if err != nil || !probe.Probe() {
		t.Fatalf("Allow after Snapshots = %v, %v; want the probe", probe, err)
	}
	snap, _ = b.Snapshot(t.Context(), testName)
	if snap.State != circuit.StateHalfOpen || !snap.Probing || !snap.LeaseUntil.Equal(clock.Now().Add(pol.ProbeLease)) || snap.State.String() != "half_open" {
		t.Errorf("Snapshot during the probe = %+v", snap)
	}
	// The probe crashed: once its lease is over, the next call probes anew.
	clock.Advance(pol.ProbeLease)
	if snap, _ = b.Snapshot(t.Context(), testName); snap.State != circuit.StateHalfOpen || snap.Probing {
		t.Errorf("Snapshot after the probe's lease = %+v, want half-open, ready to probe", snap)
	}
	_ = probe.Done(circuit.Success)
	snap, _ = b.Snapshot(t.Context(), testName)
	if snap.State != circuit.StateClosed || snap.Generation != 2 || snap.Failures != 0 || !snap.OpenUntil.IsZero() {
		t.Errorf("Snapshot after recovery = %+v", snap)
	}
}

func TestClear(t *testing.T) {
	b, s, _ := newBreaker(t)
	openCircuit(t, b, s, pol)
	oldInc := s.rec(testName).Incarnation
	if err := b.Clear(t.Context(), testName); err != nil {
		t.Fatal(err)
	}
	if snap, _ := b.Snapshot(t.Context(), testName); snap.State != circuit.StateClosed || snap.Failures != 0 || snap.Generation != 1 {
		t.Fatalf("Snapshot after Clear = %+v, want closed, generation 1, no failures", snap)
	}
	calls := 0
	if err := b.Run(t.Context(), testName, pol, counted(&calls, succeed)); err != nil || calls != 1 {
		t.Fatalf("after Clear: Run = %v after %d calls", err, calls)
	}
	if r := s.rec(testName); r.Incarnation == oldInc || r.Incarnation == driver.FirstIncarnation || r.Generation != 1 {
		t.Errorf("record after Clear: %s, want a new incarnation", fmtRecord(r))
	}
	if err := b.Clear(t.Context(), "other-api"); err != nil {
		t.Errorf("Clear of an absent circuit = %v", err)
	}
	t.Run("cancelled ctx", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.Clear(ctx, testName); !errors.Is(err, context.Canceled) {
			t.Errorf("Clear = %v, want context.Canceled", err)
		}
	})
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

func TestStoreClockByDefault(t *testing.T) {
	clock := newClock()
	s := newMemStore(t, clock)
	b := circuit.New(s) // no WithClock: the store's clock decides
	openCircuit(t, b, s, pol)
	if r := s.rec(testName); !r.OpenUntil.Equal(t0.Add(pol.Cooldown)) {
		t.Fatalf("OpenUntil = %s, want the store's now + Cooldown", fmtTime(r.OpenUntil))
	}
	wantOpenError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), circuit.StateOpen)
	clock.Advance(pol.Cooldown)
	if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
		t.Fatalf("after the store's clock passed the cooldown: %v", err)
	}

	t.Run("WithClock overrides the store's clock", func(t *testing.T) {
		mine := newClock()
		b := circuit.New(s, circuit.WithClock(mine.Now))
		openCircuit(t, b, s, pol)
		clock.Advance(24 * time.Hour) // the store's clock is far ahead
		wantOpenError(t, b.Run(t.Context(), testName, pol, mustNotRun(t)), circuit.StateOpen)
	})
}

func TestStoreWithoutClockUsesLocalClock(t *testing.T) {
	s := newMemStore(t, newClock()) // the store's clock (2030) must not be used
	s.set(func(s *memStore) { s.noClock = true })
	b := circuit.New(s)
	before := time.Now()
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Hour, ProbeLease: time.Second}
	_ = b.Run(t.Context(), testName, p, failing(errors.New("boom")))
	after := time.Now()
	r := s.rec(testName)
	if r.UpdatedAt.Before(before) || r.UpdatedAt.After(after) {
		t.Errorf("UpdatedAt = %v, want the local clock, within [%v, %v]", r.UpdatedAt, before, after)
	}
	if r.State != circuit.StateOpen || r.OpenUntil.Before(before.Add(time.Hour)) || r.OpenUntil.After(after.Add(time.Hour)) {
		t.Errorf("record %s, want open until local now + 1h", fmtRecord(r))
	}
	oe := wantOpenError(t, b.Run(t.Context(), testName, p, mustNotRun(t)), circuit.StateOpen)
	if oe.RetryAfter() > time.Hour || oe.RetryAfter() < time.Hour-time.Minute {
		t.Errorf("RetryAfter = %v, want about 1h", oe.RetryAfter())
	}
}

func TestClosedHotPathReadsNoClock(t *testing.T) {
	clock := newClock()
	var reads atomic.Int32
	s := newMemStore(t, clock)
	b := circuit.New(s, circuit.WithClock(func() time.Time { reads.Add(1); return clock.Now() }))
	_ = b.Run(t.Context(), testName, pol, succeed) // creates the record: needs the time
	reads.Store(0)
	for range 3 {
		if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
			t.Fatal(err)
		}
		_ = b.Run(t.Context(), testName, pol, ignoring(errors.New("unselected")))
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("healthy closed calls read the clock %d times, want 0", n)
	}
	_ = b.Run(t.Context(), testName, pol, failing(errors.New("boom")))
	if reads.Load() == 0 {
		t.Error("a counted failure was dated without reading the clock")
	}
}

func TestNewDoesNoIO(t *testing.T) {
	clock := newClock()
	s := newMemStore(t, clock)
	_ = circuit.New(s, circuit.WithObserver(circuit.SlogObserver(slog.New(slog.DiscardHandler))))
	if l, r, d := s.counts(); l+r+d != 0 {
		t.Errorf("New called the store: %d loads, %d replaces, %d deletes", l, r, d)
	}
}

// Example-style check that the OpenError message is usable as-is.
func TestOpenErrorMessage(t *testing.T) {
	b, s, _ := newBreaker(t)
	openCircuit(t, b, s, pol)
	err := b.Run(t.Context(), testName, pol, mustNotRun(t))
	if got, want := err.Error(), fmt.Sprintf("circuit %s is open: retry after 30s", testName); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestTicketDoneConcurrently(t *testing.T) {
	b, s, _ := newBreaker(t)
	ticket, err := b.Allow(t.Context(), testName, pol)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := ticket.Done(circuit.Failure); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if r := s.rec(testName); r.Failures != 1 {
		t.Fatalf("8 concurrent Done calls on one ticket: %s, want exactly 1 failure", fmtRecord(r))
	}
}

func TestCircuitAllow(t *testing.T) {
	b, s, clock := newBreaker(t)
	c := b.Circuit(testName, pol)
	if c.Breaker() != b {
		t.Fatalf("Circuit.Breaker = %p, want the Breaker it came from, %p", c.Breaker(), b)
	}
	for range pol.FailureThreshold {
		tk, err := c.Allow(t.Context())
		if err != nil || tk.Probe() {
			t.Fatalf("Circuit.Allow = %v, %v; want a closed ticket", tk, err)
		}
		if err := tk.Done(circuit.Failure); err != nil {
			t.Fatal(err)
		}
	}
	if r := s.rec(testName); r.State != circuit.StateOpen {
		t.Fatalf("after %d failed tickets: %s, want open", pol.FailureThreshold, fmtRecord(r))
	}
	_, err := c.Allow(t.Context())
	wantOpenError(t, err, circuit.StateOpen)
	clock.Advance(pol.Cooldown)
	probe, err := c.Allow(t.Context())
	if err != nil || !probe.Probe() {
		t.Fatalf("Circuit.Allow after the cooldown = %v, %v; want the probe", probe, err)
	}
	if err := probe.Done(circuit.Success); err != nil {
		t.Fatal(err)
	}
	if r := s.rec(testName); r.State != circuit.StateClosed {
		t.Fatalf("after the probe: %s, want closed", fmtRecord(r))
	}
	bad := b.Circuit("not a name", pol)
	var ce *circuit.ConfigError
	if _, err := bad.Allow(t.Context()); !errors.As(err, &ce) {
		t.Errorf("Allow of an invalid circuit = %v, want a *ConfigError", err)
	}
	badPolicy := b.Circuit(testName, circuit.Policy{FailureThreshold: -1})
	if _, err := badPolicy.Allow(t.Context()); !errors.As(err, &ce) {
		t.Errorf("Allow under an invalid policy = %v, want a *ConfigError", err)
	}
	if bad.Name() != "not a name" || badPolicy.Name() != testName {
		t.Errorf("Name() of the invalid circuits = %q, %q", bad.Name(), badPolicy.Name())
	}
}

// TestLocalRejectionsTrackTheDeadline: on a store that leaves the clock to
// the Breaker, the OpenError of a rejection tells the time left to the
// deadline when RetryAfter is asked, rounded up to the millisecond (at least
// 1s): never more than the time left before it is asked, never less than the
// time left after. One OpenError kept for 20ms tells 20ms less.
func TestLocalRejectionsTrackTheDeadline(t *testing.T) {
	for _, cooldown := range []time.Duration{time.Second, time.Minute} {
		t.Run(cooldown.String(), func(t *testing.T) {
			p := circuit.Policy{FailureThreshold: 1, Cooldown: cooldown, ProbeLease: time.Second}
			b, until := openedLocally(t, p)
			within := func(oe *circuit.OpenError) time.Duration {
				t.Helper()
				before := time.Now()
				ra := oe.RetryAfter()
				after := time.Now()
				hi := max(time.Second, until.Sub(before).Truncate(time.Millisecond)+time.Millisecond)
				lo := max(time.Second, until.Sub(after).Truncate(time.Millisecond))
				if ra > hi || ra < lo {
					t.Fatalf("RetryAfter = %v, want within [%v, %v]", ra, lo, hi)
				}
				return ra
			}
			var first *circuit.OpenError
			for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
				oe := wantOpenError(t, b.Run(t.Context(), testName, p, mustNotRun(t)), circuit.StateOpen)
				within(oe)
				if first == nil {
					first = oe
				}
			}
			was := within(first)
			time.Sleep(20 * time.Millisecond)
			if now := within(first); cooldown > time.Second && now > was-20*time.Millisecond {
				t.Errorf("RetryAfter of one OpenError 20ms apart: %v, then %v", was, now)
			}
		})
	}
}

// TestLocalRejectionEndsAtTheDeadline: on a store that leaves the clock to
// the Breaker, a rejection reused without reading the clock while the
// deadline is far still ends at the deadline: no call is admitted before it,
// and the first call after it is the probe.
func TestLocalRejectionEndsAtTheDeadline(t *testing.T) {
	for _, cooldown := range []time.Duration{time.Second, 1500 * time.Millisecond} {
		t.Run(cooldown.String(), func(t *testing.T) {
			p := circuit.Policy{FailureThreshold: 1, Cooldown: cooldown, ProbeLease: time.Minute}
			b, until := openedLocally(t, p)
			for {
				before := time.Now()
				ticket, err := b.Allow(t.Context(), testName, p)
				if err == nil {
					if before.Before(until) && time.Now().Before(until) {
						t.Fatalf("admitted %v before the deadline", until.Sub(before))
					}
					if !ticket.Probe() {
						t.Fatal("the first call admitted after the deadline is not the probe")
					}
					if late := before.Sub(until); late > 50*time.Millisecond {
						t.Errorf("the first call admitted began %v after the deadline, rejected meanwhile", late)
					}
					_ = ticket.Done(circuit.Success)
					return
				}
				wantOpenError(t, err, circuit.StateOpen)
				if time.Since(until) > time.Second {
					t.Fatal("still rejected a second after the deadline")
				}
			}
		})
	}
}

// localBreaker returns a Breaker over a store that leaves the clock to it.
func localBreaker(t *testing.T) (*circuit.Breaker, *memStore) {
	s := newMemStore(t, newClock())
	s.set(func(s *memStore) { s.noClock = true })
	return circuit.New(s), s
}

// openedLocally returns a localBreaker whose circuit testName a failure
// opened under p (threshold 1), and the end of its cooldown.
func openedLocally(t *testing.T, p circuit.Policy) (*circuit.Breaker, time.Time) {
	b, s := localBreaker(t)
	_ = b.Run(t.Context(), testName, p, failing(errors.New("boom")))
	return b, s.rec(testName).OpenUntil
}
