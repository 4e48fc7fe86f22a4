package circuit

import (
	"context"

	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Quiet is the hot path's one shortcut, inlined into a generated method.
// While the store vouches for a circuit's kept record, the record decides
// the call with no clock, lock or store call: a healthy one admits it, and
// a Success settles nothing (Settle counts it in a rate rule's window); a
// standing rejection returns its OpenError. Run takes the same shortcut.
type Quiet struct {
	k *kept
	c *Circuit
}

// Quiet returns the circuit's quiet decision of a call now. The zero Quiet,
// returned while the store vouches for no kept record, decides nothing.
func (c *Circuit) Quiet() Quiet {
	if k := c.kept.Load(); k != nil && k.w.Holds() {
		return Quiet{k, c}
	}
	return Quiet{}
}

// Admitted reports whether q admits the call: run it, then ask Settled.
func (q Quiet) Admitted() bool { return q.k != nil && q.k.quiet }

// Rejected returns the kept standing rejection before its deadline, or nil.
func (q Quiet) Rejected() error {
	if q.k != nil && q.k.rej != nil && q.k.rej.alarm.Pending() {
		return &q.k.rej.err
	}
	return nil
}

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
