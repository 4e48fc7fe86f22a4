package copies

import (
	"testing"
	"time"
)

// TestNowFollowsServer checks that Now is the server's time as last seen,
// carried forward on the local clock, whatever the local wall clock says;
// before any read, the local wall clock.
func TestNowFollowsServer(t *testing.T) {
	c := New()
	if d := time.Since(c.Now()); d < 0 || d > time.Second {
		t.Errorf("before any read Now is %v from the local clock", d)
	}
	skew := time.Hour // the server's clock is an hour ahead of this process's
	c.Saw(time.Now().Add(skew))
	c.Saw(time.Time{}) // a read without the server's time changes nothing
	time.Sleep(20 * time.Millisecond)
	got := c.Now().Sub(time.Now().Add(skew))
	if got < -5*time.Millisecond || got > 5*time.Millisecond {
		t.Errorf("Now is %v off the server's time carried forward", got)
	}
}
