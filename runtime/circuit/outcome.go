package circuit

import "github.com/circuitgen/circuitgen/runtime/internal/machine"

// Outcome is how a completed call is classified.
type Outcome uint8

const (
	// Ignored is a call that proves nothing: an error that was not selected
	// as a failure. It propagates unchanged and consumes no failure slot; from
	// a half-open probe it reopens the circuit without counting.
	Ignored Outcome = iota
	// Success is a call that shows the dependency healthy.
	Success
	// Failure is a call that failed in a way the classifier selected.
	Failure
)

// String returns "ignored", "success" or "failure".
func (o Outcome) String() string { return machine.Outcome(o).String() }
