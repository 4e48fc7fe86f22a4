package circuit

import (
	"context"
	"time"
)

// Snapshot is a circuit's state as read, without changing it.
type Snapshot struct {
	// Name is the circuit's name.
	Name string
	// State is the stored state. An open circuit whose cooldown has ended
	// stays open here until a call claims its probe.
	State State
	// Failures is the consecutive failure count.
	Failures int
	// Generation is the record's generation; 0 when there is no record.
	Generation uint64
	// OpenUntil is the end of the cooldown, or of an operator's hold when
	// Forced; LeaseUntil the end of the current probe's lease; zero when not
	// set.
	OpenUntil, LeaseUntil time.Time
	// UpdatedAt is when the record last changed; zero when there is none.
	UpdatedAt time.Time
	// Exists reports whether the store holds a record.
	Exists bool
	// Forced reports that an operator holds the circuit in State, open
	// (Breaker.ForceOpen) or closed (Breaker.ForceClosed), until OpenUntil.
	// A hold that has ended stays here until the next call settles (closed)
	// or claims a probe (open).
	Forced bool
	// Successes is the number of half-open probes that succeeded in a row
	// so far (Policy.CloseAfter).
	Successes int
	// Reopens is the number of times a probe reopened the circuit since it
	// last closed; each doubles the cooldown (Policy.MaxCooldown).
	Reopens int
}

// Snapshot reads the named circuit's state. It never claims a probe and
// never writes.
func (b *Breaker) Snapshot(ctx context.Context, name string) (Snapshot, error) {
	r, err := b.ref(name)
	if err != nil {
		return Snapshot{}, err
	}
	rec, _, err := r.store.Load(ctx)
	if err != nil {
		return Snapshot{}, b.stateError(r, "load", err)
	}
	if rec == nil {
		return Snapshot{Name: name, State: StateClosed}, nil
	}
	return Snapshot{
		Name: name, State: rec.State, Failures: rec.Failures, Generation: rec.Generation,
		OpenUntil: rec.OpenUntil, LeaseUntil: rec.LeaseUntil, UpdatedAt: rec.UpdatedAt, Exists: true,
		Forced: rec.Forced, Successes: rec.Successes, Reopens: rec.Reopens,
	}, nil
}

// Clear removes the named circuit's record, even a corrupt one. The circuit
// starts afresh, closed; no call admitted before the Clear can change it.
func (b *Breaker) Clear(ctx context.Context, name string) error {
	r, err := b.ref(name)
	if err != nil {
		return err
	}
	if err := r.store.Delete(ctx); err != nil {
		return b.stateError(r, "delete", err)
	}
	return nil
}
