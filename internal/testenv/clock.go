package testenv

import (
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// Clock is a clock that tests set and advance by hand, for
// circuit.WithClock or a test store's own clock: circuittest's.
type Clock = circuittest.Clock

// NewClock returns a Clock that reads t until it is changed.
func NewClock(t time.Time) *Clock { return circuittest.NewClock(t) }
