package machine

import "time"

// Clock is the time of one decision. It reads its clock at most once, and
// only when the decision asks: Admit and Settle ask only when a record is not
// clean, so the healthy call reads no clock.
//
// A decision that only needs to know that a deadline has not come asks
// Before, which a Clock can answer without reading its clock: NotYet tells
// it a deadline known not to have come (the Breaker knows it while a timer
// set for the deadline has not fired; a timer never fires early).
type Clock struct {
	read    func() time.Time
	now     time.Time
	pending time.Time
}

// At returns a Clock that reads t.
func At(t time.Time) *Clock { return &Clock{now: t} }

// Reading returns a Clock that calls read when a decision asks the time.
func Reading(read func() time.Time) Clock { return Clock{read: read} }

// Reset makes c a Clock that calls read when a decision asks the time: as
// Reading, in place.
func (c *Clock) Reset(read func() time.Time) {
	c.read, c.now, c.pending = read, time.Time{}, time.Time{}
}

// Now returns the time, reading the clock the first time it is asked.
func (c *Clock) Now() time.Time {
	if c.now.IsZero() {
		c.now = c.read()
	}
	return c.now
}

// NotYet tells c that the time is before deadline.
func (c *Clock) NotYet(deadline time.Time) { c.pending = deadline }

// Before reports whether the time is before t: without reading the clock
// when t is no earlier than a deadline NotYet gave.
func (c *Clock) Before(t time.Time) bool {
	if t == c.pending && !t.IsZero() || !c.pending.IsZero() && !t.Before(c.pending) {
		return true
	}
	return c.Now().Before(t)
}

// Read reports whether the clock was read (or given its time).
func (c *Clock) Read() bool { return !c.now.IsZero() }
