package circuit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TestOwedOpeningStartsItsCooldownWhenWritten: a failure that opens the
// circuit, refused by the store and owed while a whole cooldown passes,
// opens it when it is written, and its cooldown starts then. Other
// processes could not see the circuit open before: an opening dated back to
// its decision would end at once and let a probe through.
func TestOwedOpeningStartsItsCooldownWhenWritten(t *testing.T) {
	b, s, clock := newBreaker(t)
	ctx := t.Context()
	boom := errors.New("boom")
	for range pol.FailureThreshold - 1 {
		if err := b.Run(ctx, testName, pol, failing(boom)); !errors.Is(err, boom) {
			t.Fatalf("failure: %v", err)
		}
	}
	s.set(func(s *memStore) { s.replaceErr = errors.New("read-only") })
	var se *circuit.StateError
	if err := b.Run(ctx, testName, pol, failing(boom)); !errors.As(err, &se) || !se.Ran {
		t.Fatalf("the opening failure, refused: %v, want a StateError after the call", err)
	}
	clock.Advance(2 * pol.Cooldown)
	ran := 0
	if err := b.Run(ctx, testName, pol, counted(&ran, succeed)); !errors.As(err, &se) || se.Ran || ran != 0 {
		t.Fatalf("a call while the store refuses: %v (ran %d), want a StateError before the call", err, ran)
	}
	s.set(func(s *memStore) { s.replaceErr = nil })
	time.Sleep(300 * time.Millisecond) // the owed write is tried again after owedRetry
	err := b.Run(ctx, testName, pol, counted(&ran, succeed))
	var oe *circuit.OpenError
	if !errors.As(err, &oe) || ran != 0 {
		t.Fatalf("the first call once the store writes: %v (ran %d), want rejected as open", err, ran)
	}
	if oe.RetryAfter() != pol.Cooldown {
		t.Fatalf("RetryAfter %v, want the whole cooldown %v", oe.RetryAfter(), pol.Cooldown)
	}
}

// TestNoAdmissionWhileAnotherSettlementIsOwed: while the store refuses
// every write, a circuit that owes a settlement admits no call, even when
// later settlements (calls admitted before the store refused) replace the
// one owed while a call is repaying it.
func TestNoAdmissionWhileAnotherSettlementIsOwed(t *testing.T) {
	b, s, _ := newBreaker(t)
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 1000, Cooldown: time.Minute, ProbeLease: time.Minute}
	boom := errors.New("boom")
	const slow = 64
	release := make(chan struct{})
	var started, settled sync.WaitGroup
	started.Add(slow)
	settled.Add(slow)
	for range slow {
		go func() {
			defer settled.Done()
			_ = b.Run(ctx, testName, p, func(context.Context) (circuit.Outcome, error) {
				started.Done()
				<-release
				return circuit.Failure, boom
			})
		}()
	}
	started.Wait() // every slow call admitted while the store still writes
	s.set(func(s *memStore) { s.replaceErr = errors.New("read-only") })
	var se *circuit.StateError
	if err := b.Run(ctx, testName, p, failing(boom)); !errors.As(err, &se) || !se.Ran {
		t.Fatalf("a failure the store refused: %v, want a StateError after the call", err)
	}
	// From here every call must be refused: the circuit owes a settlement
	// the store cannot take.
	var admitted atomic.Int64
	stop := make(chan struct{})
	var hammer sync.WaitGroup
	for range 4 {
		hammer.Add(1)
		go func() {
			defer hammer.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = b.Run(ctx, testName, p, func(context.Context) (circuit.Outcome, error) {
					admitted.Add(1)
					return circuit.Success, nil
				})
			}
		}()
	}
	close(release) // the slow calls settle, each owing its failure in place of the last
	settled.Wait()
	close(stop)
	hammer.Wait()
	if n := admitted.Load(); n != 0 {
		t.Fatalf("%d calls admitted while the store refused every write and the circuit owed a settlement", n)
	}
}

// TestOwedWriteThatLandedIsNotWrittenAgain: a write the store refused may
// have landed (a rename made before a directory sync failed). The call
// that repays it finds the record it tried, and writes nothing: a failure
// is counted once.
func TestOwedWriteThatLandedIsNotWrittenAgain(t *testing.T) {
	b, s, _ := newBreaker(t)
	ctx := t.Context()
	boom := errors.New("boom")
	s.set(func(s *memStore) { s.landErr = errors.New("sync directory: EIO") })
	var se *circuit.StateError
	if err := b.Run(ctx, testName, pol, failing(boom)); !errors.As(err, &se) || !se.Ran {
		t.Fatalf("a failure whose write landed but was refused: %v, want a StateError after the call", err)
	}
	s.set(func(s *memStore) { s.landErr = nil })
	ran := 0
	if err := b.Run(ctx, testName, pol, counted(&ran, failing(boom))); !errors.Is(err, boom) || ran != 1 {
		t.Fatalf("the next call: %v (ran %d), want it admitted and its failure returned", err, ran)
	}
	if rec := s.rec(testName); rec == nil || rec.Failures != 2 || rec.State != circuit.StateClosed {
		t.Fatalf("record %s, want 2 failures counted, closed", fmtRecord(rec))
	}
}

// TestOwedRetryThatLandedIsNotWrittenAgain: the retry of an owed
// settlement may land and still be refused, as the first write may. The
// call after it finds that retry's record and writes nothing.
func TestOwedRetryThatLandedIsNotWrittenAgain(t *testing.T) {
	b, s, clock := newBreaker(t)
	ctx := t.Context()
	boom := errors.New("boom")
	s.set(func(s *memStore) { s.replaceErr = errors.New("read-only") })
	var se *circuit.StateError
	if err := b.Run(ctx, testName, pol, failing(boom)); !errors.As(err, &se) || !se.Ran {
		t.Fatalf("a failure the store refused: %v, want a StateError after the call", err)
	}
	s.set(func(s *memStore) { s.replaceErr, s.landErr = nil, errors.New("sync directory: EIO") })
	clock.Advance(time.Second) // the retry is decided as of its own time: another record than the first try
	ran := 0
	if err := b.Run(ctx, testName, pol, counted(&ran, succeed)); !errors.As(err, &se) || se.Ran || ran != 0 {
		t.Fatalf("the call whose retry landed but was refused: %v (ran %d), want a StateError before the call", err, ran)
	}
	s.set(func(s *memStore) { s.landErr = nil })
	time.Sleep(300 * time.Millisecond) // the owed write is tried again after owedRetry
	if err := b.Run(ctx, testName, pol, counted(&ran, failing(boom))); !errors.Is(err, boom) || ran != 1 {
		t.Fatalf("the next call: %v (ran %d), want it admitted and its failure returned", err, ran)
	}
	if rec := s.rec(testName); rec == nil || rec.Failures != 2 || rec.State != circuit.StateClosed {
		t.Fatalf("record %s, want 2 failures counted, closed", fmtRecord(rec))
	}
}
