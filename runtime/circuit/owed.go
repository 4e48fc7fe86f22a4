package circuit

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// A store that cannot write must never keep a circuit closed: a read-only
// database, a replica or a full disk would admit every call. So a circuit
// whose settlement the store refused, or could not load the record for,
// owes it, and refuses every call with a *StateError until it is written.
// Settlements owed are written in the order they were refused: by the next
// call (one at a time, at most once per owedRetry), or by the next
// settlement, before its own. Each is decided as of then: an opening gets
// its whole cooldown. A refused write may have landed (a rename before a
// failed directory sync): a stored record equal to the one tried is it,
// for the first settlement a try writes. Records carry no write id: a
// refused write that landed under a later one counts twice.

// owedRetry is how long a circuit that owes a settlement waits after a try
// to write it that failed.
const owedRetry = 250 * time.Millisecond

// owed is a settlement the store refused, and the one owed before it.
type owed struct {
	p    *machine.Policy
	g    machine.Grant
	o    machine.Outcome
	a    attempt // the refused write; its clock read
	err  error   // what the store said
	prev *owed   // the settlement owed before this one; set before it is owed
	paid bool    // written, under more.repaying
}

// owe makes the circuit owe the settlement of outcome o of the call of g,
// whose write failed with err, unless err is not the store's.
func (c *Circuit) owe(p *machine.Policy, g *machine.Grant, o machine.Outcome, a *attempt, err error) {
	se, ok := err.(*StateError)
	if !ok {
		return
	}
	ow := &owed{p: p, g: *g, o: o, a: *a, err: se.Err}
	ow.a.refused = a.tried
	m := c.extra()
	for ow.prev = m.owed.Load(); !m.owed.CompareAndSwap(ow.prev, ow); {
		ow.prev = m.owed.Load()
	}
	c.drop(c.kept.Load()) // the shortcut would admit calls
}

// repay writes the settlements the circuit owes, oldest first, when it is
// time to try; until they are written it returns the StateError that
// refuses the call. A call not yet admitted repays within its own ctx; a
// settlement (settling) repays detached from it, as it writes its own.
func (c *Circuit) repay(ctx context.Context, settling bool) error {
	m := c.extra()
	head := m.owed.Load()
	if head == nil {
		return nil
	}
	refused := func() error {
		return &StateError{Name: c.name, Op: "replace", Err: fmt.Errorf("a settlement could not be written, and no call is admitted until it is: %w", head.err)}
	}
	if !m.repaying.TryLock() {
		return refused()
	}
	defer m.repaying.Unlock()
	if head = m.owed.Load(); head == nil {
		return nil // written meanwhile
	}
	if time.Since(c.p.b.epoch) < m.retry {
		return refused()
	}
	var unpaid []*owed
	for ow := head; ow != nil && !ow.paid; ow = ow.prev {
		unpaid = append(unpaid, ow)
	}
	for i, ow := range slices.Backward(unpaid) {
		ow.a.clk = machine.Clock{} // decided as of now: the store's time, read at the load
		if i < len(unpaid)-1 {
			ow.a.refused = nil // its try may equal the record just written
		}
		if err := c.record(ctx, settling, ow.p, &ow.g, ow.o, &ow.a); err != nil {
			ow.a.refused = ow.a.tried
			m.retry = time.Since(c.p.b.epoch) + owedRetry
			return refused()
		}
		ow.paid = true
	}
	head.prev = nil // all paid: a later head need not keep them
	if !m.owed.CompareAndSwap(head, nil) {
		return refused() // another owed meanwhile: the next call writes it
	}
	return nil
}
