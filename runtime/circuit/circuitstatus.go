package circuit

import (
	"errors"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// StatusUnreadable is the State of a Status whose record could not be read.
const StatusUnreadable = "error"

// Status is a circuit's state as operators read it, in JSON or on a page:
// httpguard's status handler and circuitctl state report it. Like
// Snapshot, it is the state by time: an open circuit whose cooldown is over
// is "half_open", ready to probe. Times are in UTC.
type Status struct {
	// Name is the circuit's name.
	Name string `json:"name"`
	// State is "closed", "open", "half_open", or StatusUnreadable when the
	// circuit's record is corrupt or unreadable.
	State string `json:"state"`
	// Probing reports, for "half_open", that a probe holds a live claim;
	// absent (false) when the circuit is ready to probe, the next call
	// being the probe.
	Probing bool `json:"probing,omitempty"`
	// Failures is the consecutive failure count.
	Failures int `json:"failures"`
	// Generation is the record's generation; 0 when there is no record.
	Generation uint64 `json:"generation"`
	// OpenUntil is the end of the cooldown, or of an operator's hold when
	// Forced; when set.
	OpenUntil time.Time `json:"open_until,omitzero"`
	// LeaseUntil is the end of the half-open probe's lease, when set.
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	// UpdatedAt is when the record last changed, when there is one.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Forced reports that an operator holds the circuit in State, open
	// (Breaker.ForceOpen) or closed (Breaker.ForceClosed), until OpenUntil.
	Forced bool `json:"forced,omitempty"`
	// Successes is the run of half-open probe successes so far
	// (Policy.CloseAfter); Reopens how often a probe reopened the circuit
	// since it last closed (Policy.MaxCooldown).
	Successes int `json:"successes,omitempty"`
	Reopens   int `json:"reopens,omitempty"`
	// Recorded reports whether the store holds a record; a circuit none of
	// whose outcomes changed anything yet (a healthy one) has none, and
	// reads "closed".
	Recorded bool `json:"recorded"`
	// Error says why the state could not be read; empty otherwise.
	// StatusOfError sets it to a reason without the store's internals.
	Error string `json:"error,omitempty"`
}

// StatusOf returns the Status of a circuit read with Breaker.Snapshot.
func StatusOf(snap Snapshot) Status {
	return Status{
		Name: snap.Name, State: snap.State.String(), Probing: snap.Probing, Failures: snap.Failures, Generation: snap.Generation,
		OpenUntil: utc(snap.OpenUntil), LeaseUntil: utc(snap.LeaseUntil), UpdatedAt: utc(snap.UpdatedAt),
		Recorded: snap.Exists, Forced: snap.Forced, Successes: snap.Successes, Reopens: snap.Reopens,
	}
}

// StatusOfError returns the Status of the named circuit when Snapshot
// failed with err: state StatusUnreadable, and as Error the reason, without
// the store's internals (see Unreadable).
func StatusOfError(name string, err error) Status {
	return Status{Name: name, State: StatusUnreadable, Error: Unreadable(err)}
}

// Unreadable names what went wrong reading a circuit's record, without the
// store's internals (paths, keys, addresses): "invalid circuit name",
// "corrupt record" or "state unreadable".
func Unreadable(err error) string {
	if _, ok := errors.AsType[*ConfigError](err); ok {
		return "invalid circuit name"
	}
	if errors.Is(err, driver.ErrCorrupt) {
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
