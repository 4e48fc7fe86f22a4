package main

import "github.com/circuitgen/circuitgen/runtime/circuit"

// stateLabel is how the table shows a readable circuit's state: the state
// by the store's clock (circuit.Snapshot), with what a person needs beside
// it; "never seen" for a circuit the store has no record of.
func stateLabel(c circuit.Snapshot) string {
	switch {
	case !c.Exists:
		return "never seen"
	case c.Forced:
		return c.State.String() + " (forced)"
	case c.State == circuit.StateHalfOpen && c.Probing:
		return c.State.String() + " (probe in flight)"
	case c.State == circuit.StateHalfOpen:
		return c.State.String() + " (ready to probe)"
	}
	return c.State.String()
}
