package circuit

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// Snapshot is a circuit's state as read, without changing it. Its JSON form
// is what operators read (httpguard's status handler, circuitctl state):
// the state as "closed", "open", "half_open", or "error" when Error is set,
// times in UTC, unset times and false flags left out.
type Snapshot struct {
	// Name is the circuit's name.
	Name string `json:"name"`
	// State is the state by the store's clock, as the next call's decision
	// would read it: an open circuit past its cooldown (or forced hold)
	// reads StateHalfOpen, though its record says open until a call claims
	// the probe. A circuit with no record reads StateClosed.
	State State `json:"-"`
	// Probing reports, for StateHalfOpen, that a probe holds a live claim;
	// when false, the next call is the probe.
	Probing bool `json:"probing,omitempty"`
	// Failures is the consecutive failure count.
	Failures int `json:"failures"`
	// Generation is the record's generation; 0 when there is no record.
	Generation uint64 `json:"generation"`
	// OpenUntil is the end of the cooldown, or of an operator's hold;
	// LeaseUntil the end of the current probe's lease; UpdatedAt when the
	// record last changed. Each is as recorded (it may be past), zero when
	// not set.
	OpenUntil  time.Time `json:"open_until,omitzero"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	UpdatedAt  time.Time `json:"updated_at,omitzero"`
	// Forced reports that an operator holds the circuit in State until
	// OpenUntil (Breaker.ForceOpen, Breaker.ForceClosed).
	Forced bool `json:"forced,omitempty"`
	// Successes is the number of half-open probes that succeeded in a row
	// so far (Policy.CloseAfter).
	Successes int `json:"successes,omitempty"`
	// Reopens is the number of times a probe reopened the circuit since it
	// last closed; each doubles the cooldown (Policy.MaxCooldown).
	Reopens int `json:"reopens,omitempty"`
	// Exists reports whether the store holds a record: a healthy circuit
	// writes none until an outcome changes it; a Clear leaves one.
	Exists bool `json:"recorded"`
	// Error is set on the Snapshot Breaker.Snapshot returns with an error:
	// "invalid circuit name", "corrupt record" or "state unreadable", with
	// none of the store's internals (paths, keys, addresses).
	Error string `json:"error,omitempty"`
}

// snapshotJSON is a Snapshot's JSON form: its fields, with the state as
// text after the name.
type snapshotJSON struct {
	Name  string `json:"name"`
	State string `json:"state"`
	*snapshotFields
}

type snapshotFields Snapshot

// MarshalJSON returns the Snapshot's JSON form.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	state := s.State.String()
	if s.Error != "" {
		state = "error"
	}
	s.OpenUntil, s.LeaseUntil, s.UpdatedAt = s.OpenUntil.UTC(), s.LeaseUntil.UTC(), s.UpdatedAt.UTC()
	return json.Marshal(snapshotJSON{s.Name, state, (*snapshotFields)(&s)})
}

// UnmarshalJSON reads the Snapshot's JSON form.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	*s = Snapshot{}
	v := snapshotJSON{snapshotFields: (*snapshotFields)(s)}
	err := json.Unmarshal(data, &v)
	if s.Name = v.Name; err != nil || v.State == "error" {
		return err
	}
	s.State, err = driver.ParseState(v.State)
	return err
}

// Snapshot reads the named circuit's state, by the time of the store's
// clock (or WithClock's) as a call's decision would. It never claims a
// probe and never writes; a closed circuit's Snapshot reads no clock,
// unless an operator held it closed (has the hold ended?). On an error it
// also returns a Snapshot holding Name and Error.
func (b *Breaker) Snapshot(ctx context.Context, name string) (Snapshot, error) {
	c, err := b.named(name)
	var v view
	if err == nil {
		err = c.load(ctx, &v)
	}
	if err != nil {
		return Snapshot{Name: name, Error: Unreadable(err)}, err
	}
	rec := v.rec
	if rec == nil {
		return Snapshot{Name: name, State: StateClosed}, nil
	}
	snap := Snapshot{
		Name: name, Failures: rec.Failures, Generation: rec.Generation,
		OpenUntil: rec.OpenUntil.UTC(), LeaseUntil: rec.LeaseUntil.UTC(), UpdatedAt: rec.UpdatedAt.UTC(), Exists: true,
		Successes: rec.Successes, Reopens: rec.Reopens,
	}
	snap.State, snap.Probing, snap.Forced = machine.StateAt(rec, &v.clk)
	return snap, nil
}

// Unreadable names what went wrong reading a circuit's record, without the
// store's internals.
func Unreadable(err error) string {
	if _, ok := errors.AsType[*ConfigError](err); ok {
		return "invalid circuit name"
	}
	if errors.Is(err, driver.ErrCorrupt) {
		return "corrupt record"
	}
	return "state unreadable"
}

// Clear starts the named circuit afresh, in place of its record, even a
// corrupt one: closed, with no failures and an empty window. No call
// admitted before the Clear can change it: the circuit is left with a
// record of a fresh incarnation (machine.Cleared), never with none.
func (b *Breaker) Clear(ctx context.Context, name string) error {
	c, err := b.named(name)
	if err != nil {
		return err
	}
	switch _, _, err := c.storeLoad(ctx); {
	case errors.Is(err, driver.ErrCorrupt):
		if err := c.storeDelete(ctx); err != nil {
			return c.stateError("delete", err)
		}
	case err != nil:
		return c.stateError("load", err)
	}
	err = c.update(ctx, false, nil, func(v view) (*driver.Record, error) {
		return machine.Cleared(v.rec, name, v.clk.Now(), driver.NewID), nil
	})
	if err == nil {
		c.extra().owed.Store(nil) // nothing admitted before can settle now
	}
	return err
}

// ForceOpen holds the named circuit open for d, 1s..24h, in every process
// sharing the store: calls are rejected with an *OpenError whose Forced is
// set, a half-open probe in flight loses its claim, and no call admitted
// before changes the circuit. It replaces a ForceClosed hold. Clear ends it
// early; when d ends, the next call claims a half-open probe, as after any
// cooldown. A corrupt record must be cleared first.
func (b *Breaker) ForceOpen(ctx context.Context, name string, d time.Duration) error {
	return b.force(ctx, "ForceOpen", name, d, machine.ForceOpen)
}

// ForceClosed holds the named circuit closed for d, 1s..24h, in every
// process sharing the store: every call is admitted (no *OpenError), no
// outcome counts or opens the circuit, a half-open probe in flight loses
// its claim, and no call admitted before changes the circuit. It replaces
// a ForceOpen hold. Clear ends it early; when d ends, the circuit is
// plainly closed with no failures counted and a fresh window. A corrupt
// record must be cleared first.
func (b *Breaker) ForceClosed(ctx context.Context, name string, d time.Duration) error {
	return b.force(ctx, "ForceClosed", name, d, machine.ForceClosed)
}

// force stores the record that hold (machine.ForceOpen or ForceClosed)
// makes of the named circuit's for d; op names the method for errors.
func (b *Breaker) force(ctx context.Context, op, name string, d time.Duration,
	hold func(*driver.Record, string, time.Time, time.Duration, func() string) *driver.Record) error {
	c, err := b.named(name)
	if err != nil {
		return err
	}
	if d < machine.MinCooldown || d > machine.MaxCooldown {
		return &ConfigError{Field: op + " duration", Value: d.String(), Reason: "must be within 1s..24h"}
	}
	return c.update(ctx, false, nil, func(v view) (*driver.Record, error) {
		return hold(v.rec, name, v.clk.Now(), d, driver.NewID), nil
	})
}
