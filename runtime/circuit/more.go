package circuit

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/window"
)

// more is the part of a Circuit that only some circuits use, made on first
// use, or with the Circuit for bound.
type more struct {
	bound    driver.BoundStore         // the store's handle of the circuit (driver.Binder)
	rej      atomic.Pointer[rejection] // the latest rejection the kept one did not cover (reject.go)
	owed     atomic.Pointer[owed]      // the latest settlement the store refused (owed.go)
	repaying sync.Mutex                // held by the call writing the settlements owed
	retry    time.Duration             // Breaker.epoch's time of the next try to, under repaying
	win      window.Circuit            // the rate rule's windows
	reported atomic.Int64              // when a StateError was last reported (Breaker.since), 0 never
}

// extra returns c's more, making it on first use.
func (c *Circuit) extra() *more {
	if m := c.more.Load(); m != nil {
		return m
	}
	c.more.CompareAndSwap(nil, new(more))
	return c.more.Load()
}

// owing returns the settlement the circuit owes, or nil.
func (c *Circuit) owing() *owed {
	if m := c.more.Load(); m != nil {
		return m.owed.Load()
	}
	return nil
}
