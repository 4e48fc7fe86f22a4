package circuittest

import (
	"sync"
	"time"
)

// Clock is a clock a test sets and advances by hand: give its Now to
// circuit.WithClock, and the Breaker decides every cooldown, lease and
// window by it. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Start is the time a Clock made by NewClock(time.Time{}) starts at.
var Start = time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)

// NewClock returns a Clock that reads t, or Start when t is zero, until it
// is moved.
func NewClock(t time.Time) *Clock {
	if t.IsZero() {
		t = Start
	}
	return &Clock{now: t}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set sets the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
