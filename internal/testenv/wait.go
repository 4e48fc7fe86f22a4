package testenv

import (
	"testing"
	"time"
)

// LiveWithin is how long a test waits for a cached store's connection to
// go live. A session that fails (a connect or a heartbeat slower than the
// stall bound, as on a loaded machine running every package at once) is
// retried after a pause that doubles each time (copies.Cache.Keep): 30 s
// covers eight failed sessions in a row.
const LiveWithin = 30 * time.Second

// WaitFor polls cond every 100µs until it holds, failing the test after d
// with a message that it is not yet what; it returns how long that took.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	return Poll(t, 100*time.Microsecond, d, what, cond)
}

// Poll is WaitFor with cond checked every interval, for conditions that
// cost more to check, such as a round trip.
func Poll(t testing.TB, every, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("after %v: not yet %s", d, what)
		}
		time.Sleep(every)
	}
	return time.Since(start)
}
