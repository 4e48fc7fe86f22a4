package circuit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// A store that cannot write must never keep a circuit closed: a read-only
// database, a replica or a full disk would admit every call. So a circuit
// whose settlement the store refused owes it, and refuses every call with
// a *StateError until it is written. The next call writes it again (one at
// a time, at most once per owedRetry), decided as of then: an opening gets
// its whole cooldown. A refused write may have landed (a rename before a
// failed directory sync): a stored record equal to the one tried is it.

// owedRetry is how long a circuit that owes a settlement waits after a try
// to write it that failed.
const owedRetry = 250 * time.Millisecond

// owed is a settlement the store refused.
type owed struct {
	p   *machine.Policy
	g   machine.Grant
	o   machine.Outcome
	a   attempt // the refused write; its clock read
	err error   // what the store said

	mu   sync.Mutex    // held by the call trying to write it
	next time.Duration // Breaker.epoch's monotonic time of the next try, under mu
}

// owe makes the circuit owe the settlement of outcome o of the call of g,
// whose write failed with err, unless err is not a refused write.
func (c *Circuit) owe(p *machine.Policy, g *machine.Grant, o machine.Outcome, a *attempt, err error) {
	se, ok := err.(*StateError)
	if !ok || se.Op == "load" {
		return // a store that cannot be read refuses every call anyway
	}
	if se.Op == "window" && o != machine.Failure {
		return // the counts go back to the batch; only a failure could change the record
	}
	ow := &owed{p: p, g: *g, o: o, a: *a, err: se.Err}
	ow.a.refused = a.tried
	c.extra().owed.Store(ow)
	c.drop(c.kept.Load()) // the shortcut would admit calls
}

// repay writes the settlement ow when it is time to try; until a write
// succeeds it returns the StateError that refuses the call.
func (c *Circuit) repay(ctx context.Context, ow *owed) error {
	refused := func() error {
		return &StateError{Name: c.name, Op: "replace", Err: fmt.Errorf("a settlement could not be written, and no call is admitted until it is: %w", ow.err)}
	}
	if !ow.mu.TryLock() {
		return refused()
	}
	defer ow.mu.Unlock()
	switch cur := c.owing(); {
	case cur == nil:
		return nil // written meanwhile
	case cur != ow:
		return refused() // a later settlement owed in its place: the next call writes it
	}
	if time.Since(c.p.b.epoch) < ow.next {
		return refused()
	}
	ow.a.clk = machine.Clock{} // decided as of now: the store's time, read at the load
	if err := c.record(ctx, ow.p, &ow.g, ow.o, &ow.a); err != nil {
		ow.a.refused = ow.a.tried
		ow.next = time.Since(c.p.b.epoch) + owedRetry
		return refused()
	}
	if !c.extra().owed.CompareAndSwap(ow, nil) {
		return refused() // a later settlement owed meanwhile: the next call writes it
	}
	return nil
}

// landed reports whether stored is tried, a record whose write the store
// refused: every field the same, its times the same instants.
func landed(stored, tried *driver.Record) bool {
	if stored == nil || !stored.UpdatedAt.Equal(tried.UpdatedAt) || !stored.OpenUntil.Equal(tried.OpenUntil) ||
		!stored.LeaseUntil.Equal(tried.LeaseUntil) {
		return false
	}
	s, t := *stored, *tried
	s.UpdatedAt, s.OpenUntil, s.LeaseUntil = t.UpdatedAt, t.OpenUntil, t.LeaseUntil
	return s == t
}
