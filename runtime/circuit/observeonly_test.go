package circuit_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// observeOnly is each way of making a circuit observe only: the Breaker's
// option for every circuit, and the policy's field for one.
var observeOnly = []struct {
	name string
	opts []circuit.Option
	p    circuit.Policy
}{
	{"WithObserveOnly", []circuit.Option{circuit.WithObserveOnly()}, pol},
	{"Policy.ObserveOnly", nil, func() circuit.Policy { p := pol; p.ObserveOnly = true; return p }()},
}

// sameRecord reports whether a and b are the same state, their random ids
// aside: two stores driven by the same calls.
func sameRecord(a, b *driver.Record) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	x, y := *a, *b
	x.Incarnation, y.Incarnation = "", ""
	if (x.ProbeToken == "") != (y.ProbeToken == "") {
		return false
	}
	x.ProbeToken, y.ProbeToken = "", ""
	return x == y
}

// TestObserveOnlyDecidesAsUsual drives a circuit that rejects and one that
// observes only through the same calls, at the same times: every record
// they store is the same (failures count, the circuit opens, one probe is
// claimed after the cooldown and closes it); every call the first rejects,
// the second runs, outside its state, returning the operation's own result,
// and its Observers of calls hear the rejection marked observe-only.
func TestObserveOnlyDecidesAsUsual(t *testing.T) {
	for _, mode := range observeOnly {
		t.Run(mode.name, func(t *testing.T) {
			var plainLog, log callLog
			plain, ps, clock := newBreaker(t, circuit.WithObserver(&plainLog))
			s := newMemStore(t, clock)
			b := circuit.New(s, append(mode.opts, circuit.WithClock(clock.Now), circuit.WithObserver(&log))...)
			boom := errors.New("boom")
			ctx := func(m string) context.Context { return context.WithValue(t.Context(), callKey{}, m) }
			// step makes call m with outcome o through both, and checks that
			// they agree: the same record, and each rejection of plain run by b.
			step := func(m string, o op, rejected bool) {
				t.Helper()
				ran := 0
				plainErr := plain.Run(ctx(m), testName, pol, o)
				err := b.Run(ctx(m), testName, mode.p, counted(&ran, o))
				_, wantErr := o(t.Context())
				switch {
				case rejected && !errors.Is(plainErr, circuit.ErrOpen):
					t.Fatalf("call %s: the plain circuit returned %v, want a rejection", m, plainErr)
				case !rejected && errors.Is(plainErr, circuit.ErrOpen):
					t.Fatalf("call %s: the plain circuit rejected it", m)
				case ran != 1 || !errors.Is(err, wantErr) || (wantErr == nil) != (err == nil):
					t.Fatalf("call %s: observe-only ran it %d times and returned %v, want once and %v", m, ran, err, wantErr)
				}
				if a, b := ps.rec(testName), s.rec(testName); !sameRecord(a, b) {
					t.Fatalf("call %s: records differ:\n  rejecting    %s\n  observe-only %s", m, fmtRecord(a), fmtRecord(b))
				}
			}
			step("1", succeed, false)
			step("2", failing(boom), false)
			step("3", failing(boom), false)
			step("4", failing(boom), false) // opens
			step("5", succeed, true)
			step("6", failing(boom), true) // would be rejected: counts nothing
			clock.Advance(pol.Cooldown)
			plainProbe, err := plain.Allow(ctx("7"), testName, pol)
			if err != nil || !plainProbe.Probe() {
				t.Fatalf("plain Allow after the cooldown = %v, %v; want the probe", plainProbe, err)
			}
			probe, err := b.Allow(ctx("7"), testName, mode.p)
			if err != nil || !probe.Probe() {
				t.Fatalf("observe-only Allow after the cooldown = %v, %v; want the probe", probe, err)
			}
			step("8", failing(boom), true) // while the probe is out
			other, err := b.Allow(ctx("9"), testName, mode.p)
			if err != nil || other.Probe() {
				t.Fatalf("observe-only Allow during the probe = %v, %v; want a ticket that is not the probe", other, err)
			}
			if err := other.Done(circuit.Failure); err != nil {
				t.Fatalf("Done of the unadmitted ticket = %v", err)
			}
			if err := plainProbe.Done(circuit.Success); err != nil {
				t.Fatal(err)
			}
			if err := probe.Done(circuit.Success); err != nil {
				t.Fatal(err)
			}
			step("10", failing(boom), false) // closed again: counts
			if r := s.rec(testName); r.State != circuit.StateClosed || r.Generation != 2 || r.Failures != 1 {
				t.Errorf("after the probe's success and a failure: %s, want closed in generation 2 with 1 failure", fmtRecord(r))
			}

			want := []string{
				"1: billing-api success in 0s",
				"2: billing-api failure in 0s",
				"3: billing-api failure in 0s",
				"4: billing-api failure in 0s",
				"4: billing-api closed→open gen 1",
				"5: billing-api would reject (open)",
				"6: billing-api would reject (open)",
				"7: billing-api open→half_open gen 1",
				"8: billing-api would reject (half_open)",
				"9: billing-api would reject (half_open)",
				"7: billing-api success in 0s",
				"7: billing-api half_open→closed gen 2",
				"10: billing-api failure in 0s",
			}
			if !slices.Equal(log.events, want) {
				t.Errorf("the Observer heard:\n%q\nwant:\n%q", log.events, want)
			}
			// The rejecting circuit's observers hear the same, call 9 (made
			// through the observe-only circuit alone) aside.
			var wantPlain []string
			for _, e := range want {
				if !strings.HasPrefix(e, "9: ") {
					wantPlain = append(wantPlain, strings.Replace(e, "would reject", "rejected", 1))
				}
			}
			if !slices.Equal(plainLog.events, wantPlain) {
				t.Errorf("the rejecting circuit's CallObserver heard:\n%q\nwant:\n%q", plainLog.events, wantPlain)
			}
		})
	}
}

// TestObserveOnlyRejectionsMarked: the OpenError an observe-only circuit's
// CallObservers hear says so, and says what it would have said.
func TestObserveOnlyRejectionsMarked(t *testing.T) {
	var heard []*circuit.OpenError
	obs := rejections(func(e *circuit.OpenError) { heard = append(heard, e) })
	b, s, _ := newBreaker(t, circuit.WithObserveOnly(), circuit.WithObserver(obs))
	if err := b.ForceOpen(t.Context(), testName, time.Hour); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
			t.Fatalf("Run on a forced-open observe-only circuit = %v, want the operation's nil", err)
		}
	}
	if len(heard) != 2 {
		t.Fatalf("heard %d rejections, want 2", len(heard))
	}
	e := heard[0]
	if !e.ObserveOnly || !e.Forced || e.State != circuit.StateOpen || !e.Until.Equal(t0.Add(time.Hour)) || e.RetryAfter() != time.Hour {
		t.Errorf("heard %+v, want observe-only, forced, open until t0+1h", *e)
	}
	if got, want := e.Error(), "circuit billing-api is forced open (observe only: the call ran)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if r := s.rec(testName); r.State != circuit.StateOpen || !r.Forced {
		t.Errorf("record = %s, want still forced open", fmtRecord(r))
	}

	t.Run("the same circuit through a rejecting Breaker is not marked", func(t *testing.T) {
		var plain []*circuit.OpenError
		pb := circuit.New(s, circuit.WithClock(newClock().Now),
			circuit.WithObserver(rejections(func(e *circuit.OpenError) { plain = append(plain, e) })))
		if err := pb.Run(t.Context(), testName, pol, mustNotRun(t)); !errors.Is(err, circuit.ErrOpen) {
			t.Fatalf("Run = %v, want a rejection", err)
		}
		if len(plain) != 1 || plain[0].ObserveOnly {
			t.Errorf("heard %v, want one rejection, not observe-only", plain)
		}
	})
}

// TestObserveOnlyStateErrors: an observe-only circuit does not refuse calls
// when its state cannot be read, nor replace the operation's result when it
// cannot be written; Observers (ObserveEvent) hear the StateError.
func TestObserveOnlyStateErrors(t *testing.T) {
	for _, mode := range observeOnly {
		t.Run(mode.name, func(t *testing.T) {
			var ev events
			b, s, _ := newBreaker(t, append(mode.opts, circuit.WithObserver(&ev))...)
			boom := errors.New("boom")
			s.set(func(s *memStore) { s.loadErr = errors.New("disk gone") })
			ran := 0
			if err := b.Run(t.Context(), testName, mode.p, counted(&ran, failing(boom))); err != boom || ran != 1 {
				t.Fatalf("Run with an unreadable store = %v (ran %d), want the operation's own error", err, ran)
			}
			if tk, err := b.Allow(t.Context(), testName, mode.p); err != nil || tk.Done(circuit.Failure) != nil {
				t.Fatalf("Allow with an unreadable store = %v, want a ticket", err)
			}
			s.set(func(s *memStore) { s.loadErr, s.replaceErr = nil, errors.New("disk full") })
			if err := b.Run(t.Context(), testName, mode.p, failing(boom)); err != boom {
				t.Fatalf("Run with an unwritable store = %v, want the operation's own error", err)
			}
			got := ev.list()
			if len(got) == 0 || !errors.As(got[0].Err, new(*circuit.StateError)) {
				t.Errorf("EventObserver heard %v, want the StateError", got)
			}
			var ce *circuit.ConfigError
			if err := b.Run(t.Context(), "9lives", mode.p, mustNotRun(t)); !errors.As(err, &ce) {
				t.Errorf("Run with a bad name = %v, want a *ConfigError still", err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			s.set(func(s *memStore) { s.replaceErr = nil })
			if err := b.Run(ctx, testName, mode.p, mustNotRun(t)); !errors.Is(err, context.Canceled) {
				t.Errorf("Run with a canceled context = %v, want context.Canceled still", err)
			}
		})
	}
}

// rejections is an Observer of calls that hears only rejections.
type rejections func(*circuit.OpenError)

var _ circuit.Observer = rejections(nil)

func (f rejections) ObserveTransition(circuit.Transition)                                   {}
func (f rejections) ObserveTransitionContext(context.Context, circuit.Transition)           {}
func (f rejections) ObserveOutcome(context.Context, string, circuit.Outcome, time.Duration) {}
func (f rejections) ObserveRejection(_ context.Context, e *circuit.OpenError)               { f(e) }
