package circuittest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// A test of what a caller does while billing's circuit is open, and once
// its cooldown is over, in a few lines and no waiting.
func Example() {
	kit := circuittest.New()
	charge := func() error { // the code under test: a guarded call
		return kit.Breaker.Run(context.Background(), "billing-api", circuit.Policy{}, func(context.Context) (circuit.Outcome, error) {
			return circuit.Success, nil
		})
	}

	kit.Open("billing-api", time.Minute)
	var open *circuit.OpenError
	fmt.Println(errors.As(charge(), &open), open.RetryAfter())

	kit.Advance(time.Minute)
	fmt.Println(charge(), kit.State("billing-api"))
	// Output:
	// true 1m0s
	// <nil> closed
}
