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

// TestOwedThatLandedUnderALaterSettlementCountsOnce: a failure whose write
// landed though the store refused it is owed. A call admitted before it
// settles its own failure after it: the owed one is written first, found
// landed, and not counted again.
func TestOwedThatLandedUnderALaterSettlementCountsOnce(t *testing.T) {
	b, s, _ := newBreaker(t)
	ctx := t.Context()
	boom := errors.New("boom")
	earlier, err := b.Allow(ctx, testName, pol)
	if err != nil {
		t.Fatal(err)
	}
	s.set(func(s *memStore) { s.landErr = errors.New("sync directory: EIO") })
	wantStateError(t, b.Run(ctx, testName, pol, failing(boom)), "replace", true)
	s.set(func(s *memStore) { s.landErr = nil })
	if err := earlier.Done(circuit.Failure); err != nil {
		t.Fatalf("the earlier call's failure: %v", err)
	}
	ran := 0
	err = b.Run(ctx, testName, pol, counted(&ran, failing(boom)))
	if rec := s.rec(testName); ran != 1 || rec.Failures != 3 || rec.State != circuit.StateOpen {
		t.Fatalf("three failures under threshold %d: the third ran %d times (%v), record %s; want 3 failures, open",
			pol.FailureThreshold, ran, err, fmtRecord(rec))
	}
}

// TestEverySettlementOwedIsWritten: two failures admitted while the circuit
// was healthy are both refused by a read-only store. Once it writes again,
// both are written, in order: the circuit, threshold two, opens.
func TestEverySettlementOwedIsWritten(t *testing.T) {
	b, s, _ := newBreaker(t)
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 2, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}
	var tickets []*circuit.Ticket
	for range 2 {
		tk, err := b.Allow(ctx, testName, p)
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	s.set(func(s *memStore) { s.replaceErr = errors.New("read-only") })
	for _, tk := range tickets {
		wantStateError(t, tk.Done(circuit.Failure), "replace", true)
	}
	s.set(func(s *memStore) { s.replaceErr = nil })
	ran := 0
	err := b.Run(ctx, testName, p, counted(&ran, succeed))
	for end := time.Now().Add(2 * time.Second); errors.As(err, new(*circuit.StateError)) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond) // the last try failed: the next one waits owedRetry
		err = b.Run(ctx, testName, p, counted(&ran, succeed))
	}
	if rec := s.rec(testName); ran != 0 || rec.State != circuit.StateOpen {
		t.Fatalf("two refused failures under threshold 2, the store writable again: the next call ran %d times (%v), record %s; want it rejected, open",
			ran, err, fmtRecord(rec))
	}
	wantOpenError(t, err, circuit.StateOpen)
}

// TestSettlementOwedAfterALoadError: a failure's settlement meets a
// concurrent change, then a load error. It is owed like a refused write:
// once the store reads again, it is written before any call is admitted.
func TestSettlementOwedAfterALoadError(t *testing.T) {
	b, s, _ := newBreaker(t)
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 1, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}
	s.set(func(s *memStore) {
		s.conflicts = 1
		s.beforeCommit = func() { s.set(func(s *memStore) { s.loadErr = errors.New("connection reset") }) }
	})
	boom := errors.New("boom")
	wantStateError(t, b.Run(ctx, testName, p, failing(boom)), "load", true)
	s.set(func(s *memStore) { s.loadErr = nil })
	ran := 0
	err := b.Run(ctx, testName, p, counted(&ran, succeed))
	if ran != 0 || s.rec(testName).State != circuit.StateOpen {
		t.Fatalf("a failure under threshold 1, the store readable again: the next call ran %d times (%v), record %s; want it rejected, open",
			ran, err, fmtRecord(s.rec(testName)))
	}
}

// TestRepayWithinTheCallsContext: a call that writes a settlement owed
// before it is admitted does so within its own context: on a frozen store
// it fails when its context ends, not after the detached settleTimeout.
func TestRepayWithinTheCallsContext(t *testing.T) {
	b, s, _ := newBreaker(t)
	s.set(func(s *memStore) { s.replaceErr = errors.New("read-only") })
	wantStateError(t, b.Run(t.Context(), testName, pol, failing(errors.New("boom"))), "replace", true)
	s.set(func(s *memStore) { s.replaceErr, s.frozen = nil, true })
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := b.Run(ctx, testName, pol, mustNotRun(t))
	if took := time.Since(start); err == nil || took > 5*time.Second {
		t.Fatalf("a call repaying on a frozen store under a 100ms context: %v after %v", err, took)
	}
}
