package main

import "github.com/circuitgen/circuitgen/runtime/circuit"

// stateLabel is how the table shows a readable circuit's state: the state
// by the store's clock (circuit.Snapshot), with what a person needs beside
// it; "never seen" for a circuit the store has no record of.
func stateLabel(c circuit.Status) string {
	switch {
	case !c.Recorded:
		return "never seen"
	case c.Forced:
		return c.State + " (forced)"
	case c.State == circuit.StateHalfOpen.String() && c.Probing:
		return c.State + " (probe in flight)"
	case c.State == circuit.StateHalfOpen.String():
		return c.State + " (ready to probe)"
	}
	return c.State
}
