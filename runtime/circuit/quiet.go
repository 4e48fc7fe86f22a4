package circuit

import (
	"context"

	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Quiet is the hot path's one shortcut, in a form the compiler inlines into
// a generated method. While the store vouches for a healthy circuit's kept
// record, a call is admitted with no clock, lock or store call, and a
// Success settles nothing (under a rate rule, Settle counts it in the
// window). Run takes the same shortcut. The zero Quiet admits nothing: the
// call goes through Run.
type Quiet struct {
	k *kept
	c *Circuit
}

// Quiet returns the circuit's quiet admission of a call now, or the zero
// Quiet when the call must go through Run: the circuit keeps no record the
// store vouches for, or its record or policy has something to decide.
func (c *Circuit) Quiet() Quiet {
	if k := c.kept.Load(); k != nil && k.quiet && k.w.Holds() {
		return Quiet{k, c}
	}
	return Quiet{}
}

// Admitted reports whether q admits the call: run it, then ask Settled.
func (q Quiet) Admitted() bool { return q.k != nil }

// Settled reports whether the call q admitted, whose operation returned
// outcome o, has nothing left to settle: o is a Success no rate rule counts,
// and no process changed the circuit's record since q. Otherwise settle it
// with Settle.
func (q Quiet) Settled(o Outcome) bool { return o == Success && !q.k.count && q.k.w.Unchanged() }

// Settle settles the call q admitted, whose operation returned o and err,
// as Run would: it returns err, or a *StateError when the outcome could not
// be recorded after the operation ran.
func (q Quiet) Settle(ctx context.Context, o Outcome, err error) error {
	if b := q.c.p.b; o == Success && q.k.count && q.k.w.Unchanged() &&
		q.c.extra().win.Success(&b.wins, q.c.name, &q.c.p.rules, q.k.rec, b.read, b.alarms, b.local) == nil {
		return err // counted in the rate rule's window, it decides nothing (machine.Standing)
	}
	t := Ticket{c: q.c, ctx: ctx, p: &q.c.p.rules, grant: machine.GrantOf(q.k.rec)}
	return t.finish(o, err)
}
