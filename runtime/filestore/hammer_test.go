//go:build linux

package filestore

import (
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// hammerPolicies are the rate-rule policies the hammer script runs under,
// by its argument: a window of time, and one of the last calls.
var hammerPolicies = map[string]circuit.Policy{
	windowName:     {FailureRate: 0.5, MinCalls: 100, Window: time.Minute, Cooldown: 10 * time.Minute},
	callWindowName: {FailureRate: 0.5, MinCalls: 100, WindowCalls: 200, Cooldown: 10 * time.Minute},
}
