package copies

import "time"

// serverTime is the server's time as a read returned it, and the local
// monotonic reading taken when the reply arrived.
type serverTime struct {
	server, at time.Time
}

// Saw records the server's time as a read from the server returned it.
func (c *Cache) Saw(server time.Time) {
	if !server.IsZero() {
		c.clock.Store(&serverTime{server: server, at: time.Now()})
	}
}

// Now returns the server's time as last seen (Saw), carried forward on the
// local monotonic clock, so that what a process decides on its copies
// (which come without the server's time), such as the bucket of a window
// count, follows the same clock as every other process on the server; a
// wall clock that is skewed or steps does not move it. Before any read, it
// is the local wall clock.
func (c *Cache) Now() time.Time {
	t := c.clock.Load()
	if t == nil {
		return time.Now()
	}
	return t.server.Add(time.Since(t.at))
}
