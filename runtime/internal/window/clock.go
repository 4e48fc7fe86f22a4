package window

import (
	"sync"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/alarm"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// A quiet Success under a time window counts in the bucket of a reading
// kept until the alarm clock rings the bucket's end: the rate rule's speed
// trick, as a clock reading costs more here than a lean breaker's whole
// call (BENCHMARKS.md, rate rule). An alarm never rings early, and late
// only for a stopped process: a call then counts in the bucket just ended,
// or not at all (driver.WindowCells). Buckets are aligned on the clock, so
// a Breaker keeps one reading, and one alarm, per span (ticks).

// tick is a reading of the clock in the current bucket of a window of
// span w, and the alarm set for the bucket's end.
type tick struct {
	w      time.Duration
	at     time.Time
	b      int64 // at's bucket
	alarm  alarm.Alarm
	alarms *alarm.Clock // where alarm is set
}

// ticks are a Breaker's readings, the latest of each span.
type ticks struct {
	mu sync.Mutex
	by map[time.Duration]*tick
}

// clock returns the clock a Success counts by in the time window of span
// w: the reading c used last while its bucket lasts, else the Breaker's
// (ts), else a new one of read's, with an alarm set on alarms for its
// bucket's end. Only the local clock's readings are kept: with another
// (injected, or a server's) or for a window of calls, read's every time.
func (c *Circuit) clock(ts *ticks, read func() time.Time, alarms *alarm.Clock, local bool, w time.Duration) machine.Clock {
	if t := c.tick.Load(); t != nil && t.w == w && t.alarm.Pending() {
		return *machine.At(t.at)
	}
	var clk machine.Clock
	clk.Reset(read)
	if !local || w == 0 {
		return clk
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.by[w]
	if t == nil || !t.alarm.Pending() {
		t = &tick{w: w, at: clk.Now(), alarms: alarms}
		t.b = driver.Bucket(t.at, w)
		left := (t.b+1)*int64(w/driver.WindowBuckets) - t.at.UnixNano()
		alarms.Set(&t.alarm, time.Now().Add(time.Duration(left)))
		if ts.by == nil {
			ts.by = map[time.Duration]*tick{}
		}
		ts.by[w] = t
	}
	c.tick.Store(t)
	return *machine.At(t.at)
}

// forget rings the alarm of the reading c keeps for span w when bk, the
// bucket of a reading just taken, is another: the store's clock moved
// apart from the monotonic clock (a suspend of the machine), and every
// circuit of the Breaker reads the clock again. Any call that reads the
// clock so forgets it: a failure, or the first after the store's recheck
// drops its Watches.
func (c *Circuit) forget(w time.Duration, bk int64) {
	if t := c.tick.Load(); t != nil && t.w == w && t.b != bk && t.alarm.Pending() {
		t.alarms.Unset(&t.alarm)
	}
}
