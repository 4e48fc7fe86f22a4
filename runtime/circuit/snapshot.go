package circuit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Snapshot is a circuit's state as read, without changing it.
type Snapshot struct {
	// Name is the circuit's name.
	Name string
	// State is the state by the store's clock, as the next call's decision
	// would read it: an open circuit whose cooldown (or forced open) is
	// over reads StateHalfOpen, not yet claimed, although its record says
	// open until a call claims the probe. A circuit with no record reads
	// StateClosed.
	State State
	// Probing reports, for StateHalfOpen, that a probe holds a live claim:
	// other calls are rejected until it settles or its lease ends. When
	// false, the circuit is ready to probe: the next call is the probe.
	Probing bool
	// Failures is the consecutive failure count.
	Failures int
	// Generation is the record's generation; 0 when there is no record.
	Generation uint64
	// OpenUntil is the end of the cooldown, or of an operator's hold when
	// the record is forced; LeaseUntil the end of the current probe's lease;
	// as recorded (either may be past); zero when not set.
	OpenUntil, LeaseUntil time.Time
	// UpdatedAt is when the record last changed; zero when there is none.
	UpdatedAt time.Time
	// Exists reports whether the store holds a record: false for a
	// circuit none of whose outcomes changed anything yet (a healthy
	// circuit writes no record); a Clear leaves a record.
	Exists bool
	// Forced reports that an operator holds the circuit in State until
	// OpenUntil, which has not passed: open (Breaker.ForceOpen) or closed
	// (Breaker.ForceClosed).
	Forced bool
	// Successes is the number of half-open probes that succeeded in a row
	// so far (Policy.CloseAfter).
	Successes int
	// Reopens is the number of times a probe reopened the circuit since it
	// last closed; each doubles the cooldown (Policy.MaxCooldown).
	Reopens int
}

// Snapshot reads the named circuit's state, by the time of the store's
// clock (or WithClock's) as a call's decision would. It never claims a
// probe and never writes; a closed circuit's Snapshot reads no clock,
// unless an operator held it closed (has the hold ended?).
func (b *Breaker) Snapshot(ctx context.Context, name string) (Snapshot, error) {
	r, err := b.named(name)
	if err != nil {
		return Snapshot{}, err
	}
	rec, storeNow, err := r.store.Load(ctx)
	if err != nil {
		return Snapshot{}, b.stateError(r, "load", err)
	}
	if rec == nil {
		return Snapshot{Name: name, State: StateClosed}, nil
	}
	snap := Snapshot{
		Name: name, State: rec.State, Failures: rec.Failures, Generation: rec.Generation,
		OpenUntil: rec.OpenUntil, LeaseUntil: rec.LeaseUntil, UpdatedAt: rec.UpdatedAt, Exists: true,
		Forced: rec.Forced, Successes: rec.Successes, Reopens: rec.Reopens,
	}
	switch rec.State {
	case StateClosed:
		if rec.Forced && !machine.Held(rec, b.now(storeNow)) {
			snap.Forced = false
		}
	case StateOpen:
		if !b.now(storeNow).Before(rec.OpenUntil) {
			snap.State, snap.Forced = StateHalfOpen, false
		}
	case StateHalfOpen:
		snap.Probing = b.now(storeNow).Before(rec.LeaseUntil)
	}
	return snap, nil
}

// Clear starts the named circuit afresh, closed with no failures and an
// empty window, in place of its record, even a corrupt one; no call
// admitted before the Clear can change it. A circuit with a record is left
// with a closed one of a fresh incarnation (machine.Cleared), not with none:
// calls admitted while a circuit had no record settle against none, so a
// circuit cleared back to none would count them; a circuit with no record
// gets one too. A corrupt record is removed first.
func (b *Breaker) Clear(ctx context.Context, name string) error {
	r, err := b.named(name)
	if err != nil {
		return err
	}
	for range maxConflicts {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, storeNow, err := r.store.Load(ctx)
		if errors.Is(err, driver.ErrCorrupt) {
			if err := r.store.Delete(ctx); err != nil {
				return b.stateError(r, "delete", err)
			}
			rec, storeNow, err = nil, time.Time{}, nil
		} else if err != nil {
			return b.stateError(r, "load", err)
		}
		next := machine.Cleared(rec, r.name, b.now(storeNow), newID)
		if ok, err := b.replace(ctx, r, rec, next); err != nil || ok {
			return err
		}
	}
	return b.stateError(r, "replace", fmt.Errorf("gave up after %d concurrent changes", maxConflicts))
}
