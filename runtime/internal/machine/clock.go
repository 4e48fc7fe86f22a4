package machine

import "time"

// Clock is the time of one decision. It reads its clock at most once, and
// only when the decision asks: Admit and Settle ask only when a record is not
// quiet (StandingOf), so the healthy call reads no clock.
type Clock struct {
	read func() time.Time
	now  time.Time
}

// At returns a Clock that reads t.
func At(t time.Time) *Clock { return &Clock{now: t} }

// Reading returns a Clock that calls read when a decision asks the time.
func Reading(read func() time.Time) Clock { return Clock{read: read} }

// Reset makes c a Clock that calls read when a decision asks the time: as
// Reading, in place.
func (c *Clock) Reset(read func() time.Time) {
	c.read, c.now = read, time.Time{}
}

// Now returns the time, reading the clock the first time it is asked.
func (c *Clock) Now() time.Time {
	if c.now.IsZero() {
		c.now = c.read()
	}
	return c.now
}

// Before reports whether the time is before t.
func (c *Clock) Before(t time.Time) bool { return c.Now().Before(t) }

// Read reports whether the clock was read (or given its time).
func (c *Clock) Read() bool { return !c.now.IsZero() }
