package circuit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

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
