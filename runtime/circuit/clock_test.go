package circuit_test

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

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

// TestKeptRejectionEndsByTheStoreClock: a store whose processes share a
// clock ahead of the wall clock, read as time.Now().Add(skew), a Time with a
// monotonic reading. A kept rejection ends when that clock reaches the
// deadline, as it does with no skew: the Breaker ignores the store clock's
// monotonic reading.
func TestKeptRejectionEndsByTheStoreClock(t *testing.T) {
	for _, skew := range []time.Duration{0, 3 * time.Second, -3 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			s := newWatchedStore(t)
			s.now = func() time.Time { return time.Now().Add(skew) }
			p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second}
			c := circuit.New(clockedStore{s}).Circuit(testName, p)
			boom := errors.New("boom")
			if err := c.Run(t.Context(), failing(boom)); !errors.Is(err, boom) {
				t.Fatal(err)
			}
			until := s.rec(testName).OpenUntil
			for {
				ran := 0
				before := s.now()
				err := c.Run(t.Context(), counted(&ran, succeed))
				if ran == 1 {
					if before.Before(until) && s.now().Before(until) {
						t.Fatalf("admitted %v before the deadline by the store's clock", until.Sub(before))
					}
					return
				}
				wantOpenError(t, err, circuit.StateOpen)
				if late := s.now().Sub(until); late > 500*time.Millisecond {
					t.Fatalf("still rejected %v after the deadline by the store's clock", late)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}
