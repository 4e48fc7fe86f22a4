package circuit

import "github.com/circuitgen/circuitgen/runtime/circuit/driver"

// State is a circuit's state: closed, open or half-open.
type State = driver.State

const (
	// StateClosed admits every call and counts consecutive failures.
	StateClosed = driver.StateClosed
	// StateOpen rejects every call until its cooldown ends.
	StateOpen = driver.StateOpen
	// StateHalfOpen admits one probe at a time, across every process
	// sharing the store, and rejects everyone else until the probe settles
	// or its lease expires.
	StateHalfOpen = driver.StateHalfOpen
)
