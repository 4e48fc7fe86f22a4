package httpguard

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// StateError is the State of a CircuitStatus whose state could not be read.
const StateError = "error"

// StatusReport is the JSON document StatusHandler serves.
type StatusReport struct {
	// GeneratedAt is when the report was made, by this server's clock.
	GeneratedAt time.Time `json:"generated_at"`
	// Circuits are the circuits reported, sorted by name.
	Circuits []CircuitStatus `json:"circuits"`
	// Error is set when the list of circuits could not be obtained; it
	// says so without the store's internals.
	Error string `json:"error,omitempty"`
}

// CircuitStatus is one circuit's state as stored.
type CircuitStatus struct {
	// Name is the circuit's name.
	Name string `json:"name"`
	// State is "closed", "open", "half_open", or StateError when the
	// circuit's record is corrupt or unreadable.
	State string `json:"state"`
	// Failures is the consecutive failure count.
	Failures int `json:"failures"`
	// Generation is the record's generation; 0 when there is no record.
	Generation uint64 `json:"generation"`
	// OpenUntil is the end of the cooldown, when set.
	OpenUntil time.Time `json:"open_until,omitzero"`
	// LeaseUntil is the end of the half-open probe's lease, when set.
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	// UpdatedAt is when the record last changed, when there is one.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Recorded reports whether the store holds a record; a circuit never
	// called has none and is closed.
	Recorded bool `json:"recorded"`
	// Error says why the state could not be read ("corrupt record",
	// "state unreadable", "invalid circuit name"), without the store's
	// internals; empty otherwise.
	Error string `json:"error,omitempty"`
}

// report reads every named circuit. One circuit's error is recorded in its
// entry and does not stop the others.
func report(ctx context.Context, b *circuit.Breaker, names []string, now time.Time) StatusReport {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	rep := StatusReport{GeneratedAt: now.UTC(), Circuits: make([]CircuitStatus, 0, len(names))}
	for _, name := range names {
		snap, err := b.Snapshot(ctx, name)
		if err != nil {
			rep.Circuits = append(rep.Circuits, CircuitStatus{Name: name, State: StateError, Error: describe(err)})
			continue
		}
		rep.Circuits = append(rep.Circuits, CircuitStatus{
			Name: name, State: snap.State.String(), Failures: snap.Failures, Generation: snap.Generation,
			OpenUntil: utc(snap.OpenUntil), LeaseUntil: utc(snap.LeaseUntil), UpdatedAt: utc(snap.UpdatedAt),
			Recorded: snap.Exists,
		})
	}
	return rep
}

// describe names what went wrong reading a circuit, without internals.
func describe(err error) string {
	if _, ok := errors.AsType[*circuit.ConfigError](err); ok {
		return "invalid circuit name"
	}
	if se, ok := errors.AsType[*circuit.StateError](err); ok && se.Corrupt() {
		return "corrupt record"
	}
	return "state unreadable"
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
