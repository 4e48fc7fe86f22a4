// Package alarm is an alarm clock for many deadlines with one timer: each
// Alarm is marked passed once its deadline has come, never before. The
// Breaker sets one for each standing rejection it keeps, so that the hot
// path knows the deadline has not come without reading a clock.
package alarm

import (
	"sync"
	"sync/atomic"
	"time"
)

// Alarm is a deadline on the monotonic clock, and whether it has passed.
// The zero Alarm is passed: only a Clock's Set makes it wait.
type Alarm struct {
	due     time.Time
	pending atomic.Bool // set, and its deadline not come
	at      int         // its place in its Clock's heap, while pending
}

// Pending reports whether the alarm is set and its deadline has not come.
func (a *Alarm) Pending() bool { return a.pending.Load() }

// Clock rings alarms at their deadlines with one timer over a heap of them,
// the earliest first. Its zero value is ready. Alarms that come due
// together ring in one goroutine.
type Clock struct {
	mu    sync.Mutex
	heap  []*Alarm
	timer *time.Timer
}

// Set sets a, which no Clock holds, for due, a time with a monotonic
// reading: a is not passed until then.
func (c *Clock) Set(a *Alarm, due time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a.due = due
	a.pending.Store(true)
	a.at = len(c.heap)
	c.heap = append(c.heap, a)
	c.up(a.at)
	if c.heap[0] != a {
		return
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(time.Until(a.due), c.ring)
	} else {
		c.timer.Reset(time.Until(a.due))
	}
}

// Unset marks a passed and takes it off the clock, if it is on it.
func (c *Clock) Unset(a *Alarm) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.pending.Load() {
		c.remove(a.at)
	}
}

// ring marks every alarm whose deadline has come passed, and sets the
// timer for the next one.
func (c *Clock) ring() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.heap) > 0 {
		a := c.heap[0]
		if left := time.Until(a.due); left > 0 {
			c.timer.Reset(left)
			return
		}
		c.remove(0)
	}
}

// remove takes the alarm at i off the heap, passed. The caller holds c.mu.
func (c *Clock) remove(i int) {
	last := len(c.heap) - 1
	c.swap(i, last)
	c.heap[last].pending.Store(false)
	c.heap[last] = nil // the slot no longer keeps the alarm, and its rejection, alive
	c.heap = c.heap[:last]
	if i < last {
		c.down(i)
		c.up(i)
	}
}

func (c *Clock) less(i, j int) bool { return c.heap[i].due.Before(c.heap[j].due) }

func (c *Clock) swap(i, j int) {
	c.heap[i], c.heap[j] = c.heap[j], c.heap[i]
	c.heap[i].at, c.heap[j].at = i, j
}

func (c *Clock) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !c.less(i, p) {
			return
		}
		c.swap(i, p)
		i = p
	}
}

func (c *Clock) down(i int) {
	for {
		k := 2*i + 1
		if k >= len(c.heap) {
			return
		}
		if k+1 < len(c.heap) && c.less(k+1, k) {
			k++
		}
		if !c.less(k, i) {
			return
		}
		c.swap(i, k)
		i = k
	}
}
