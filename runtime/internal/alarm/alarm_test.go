package alarm

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestClock: alarms ring at their deadlines, never before, in any order of
// setting; an unset alarm is passed at once and leaves the heap; the heap
// stays a heap whatever is removed from it.
func TestClock(t *testing.T) {
	var c Clock
	start := time.Now()
	const n = 200
	alarms := make([]*Alarm, n)
	for i, k := range rand.Perm(n) {
		alarms[i] = new(Alarm)
		c.Set(alarms[i], start.Add(time.Duration(20+k)*time.Millisecond))
	}
	for i, a := range alarms {
		if !a.Pending() {
			t.Fatalf("alarm %d passed as it was set", i)
		}
	}
	unset := alarms[:n/4]
	for _, a := range unset {
		c.Unset(a)
		if a.Pending() {
			t.Fatal("an unset alarm is not passed")
		}
	}
	c.mu.Lock()
	for i := 1; i < len(c.heap); i++ {
		if c.less(i, (i-1)/2) || c.heap[i].at != i {
			t.Fatalf("heap broken at %d after unsets", i)
		}
	}
	c.mu.Unlock()
	for _, a := range alarms[n/4:] {
		for a.Pending() {
			if time.Since(start) > 5*time.Second {
				t.Fatal("an alarm did not ring within 5s")
			}
			time.Sleep(time.Millisecond)
		}
		if now := time.Now(); now.Before(a.due) {
			t.Fatalf("an alarm rang %v before its deadline", a.due.Sub(now))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.heap) != 0 {
		t.Fatalf("%d alarms left on the clock after every deadline", len(c.heap))
	}
}

// TestZeroIsPassed: an alarm no clock set is passed, and unsetting it
// changes nothing.
func TestZeroIsPassed(t *testing.T) {
	var c Clock
	var a Alarm
	c.Unset(&a)
	if a.Pending() {
		t.Fatal("an alarm never set is not passed")
	}
}
