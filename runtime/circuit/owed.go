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
// database, a replica, a full disk reads a record that no failure changes,
// and would admit every call. So when the write of a settlement fails, the
// circuit owes the store that settlement, and refuses every call with a
// *StateError before running it until the settlement is written: the next
// call writes it again (one at a time; after a try that failed, not again
// for owedRetry), and is admitted once a write succeeds or the settlement
// has gone stale. It is decided again as of the time it is written: other
// processes could not see the circuit open before, so an opening it makes
// gets its whole cooldown (one dated back to the first try would end at
// once and let a probe through). A refused write may have landed (a rename
// made before a directory sync failed): a record that is the one last
// tried is the settlement written.

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

// repay writes the settlement ow the circuit owes when it is time to try,
// and then lets calls through; until the write succeeds it returns the
// StateError that refuses the call.
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

// landed reports whether the stored record is tried, a record whose write
// the store refused: every field the same, its times the same instants.
func landed(stored, tried *driver.Record) bool {
	if stored == nil || !stored.UpdatedAt.Equal(tried.UpdatedAt) || !stored.OpenUntil.Equal(tried.OpenUntil) ||
		!stored.LeaseUntil.Equal(tried.LeaseUntil) {
		return false
	}
	s, t := *stored, *tried
	s.UpdatedAt, s.OpenUntil, s.LeaseUntil = t.UpdatedAt, t.OpenUntil, t.LeaseUntil
	return s == t
}
