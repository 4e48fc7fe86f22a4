package circuit_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TestQuietSuccessAfterClockStep: the store's clock steps forward (a
// suspend of the machine: the monotonic clock, and the alarm of the
// rate rule's kept reading, stood still). The first call that reads the
// clock afterwards (a failure, or the first call after the store's recheck
// drops its Watches, as the file store's does within a second) forgets the
// kept reading, so the quiet successes after it count in the current
// bucket: 12 successes and 4 failures (25%) leave a 50% rule closed.
func TestQuietSuccessAfterClockStep(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		after func(s *watchedStore, c *circuit.Circuit)
	}{
		{"a failure reads the clock", func(s *watchedStore, c *circuit.Circuit) { _ = c.Run(t.Context(), failing(boom)) }},
		{"the store's recheck", func(s *watchedStore, c *circuit.Circuit) { s.epoch.Add(1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var off atomic.Int64
			s := newWatchedStore(t)
			s.now = func() time.Time { return time.Now().Add(time.Duration(off.Load())) }
			p := circuit.Policy{FailureRate: 0.5, MinCalls: 4, Window: time.Minute, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}
			c := circuit.New(clockedStore{s}).Circuit(testName, p)
			ctx := t.Context()
			for range 2 { // the second is quiet, and keeps a reading
				if err := c.Run(ctx, succeed); err != nil {
					t.Fatal(err)
				}
			}
			off.Store(int64(time.Hour))
			tc.after(s, c)
			for range 12 {
				if err := c.Run(ctx, succeed); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 {
				_ = c.Run(ctx, failing(boom))
			}
			if rec := s.rec(testName); rec != nil && rec.State != circuit.StateClosed {
				t.Fatalf("after 12 successes and 4 failures (25%%) under a 50%% rule the circuit is %v", rec.State)
			}
		})
	}
}
