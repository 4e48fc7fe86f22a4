package testenv

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// RequireOneProbe has eight callers at once call the named circuit of b
// under p for a second, each operation taking 100 ms, and fails the test
// unless exactly one call began before the first admitted one ended: with
// the circuit unknown (a lost record), the first admitted is a probe, and
// no other begins before it ends.
func RequireOneProbe(t *testing.T, b *circuit.Breaker, name string, p circuit.Policy) {
	t.Helper()
	ctx := t.Context()
	var (
		mu       sync.Mutex
		admitted []time.Time // when each admitted call began its operation
		firstEnd time.Time
		wg       sync.WaitGroup
	)
	deadline := time.Now().Add(time.Second)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				cctx, cancel := context.WithTimeout(ctx, time.Second)
				_ = b.Run(cctx, name, p, func(context.Context) (circuit.Outcome, error) {
					mu.Lock()
					admitted = append(admitted, time.Now())
					mu.Unlock()
					time.Sleep(100 * time.Millisecond)
					mu.Lock()
					if firstEnd.IsZero() {
						firstEnd = time.Now()
					}
					mu.Unlock()
					return circuit.Success, nil
				})
				cancel()
				time.Sleep(time.Millisecond)
			}
		}()
	}
	wg.Wait()
	early := 0
	for _, a := range admitted {
		if !firstEnd.IsZero() && a.Before(firstEnd) {
			early++
		}
	}
	t.Logf("%d calls admitted, %d of them begun before the first admitted ended", len(admitted), early)
	if early != 1 {
		t.Errorf("%d calls admitted before the first admitted one ended, want 1: a probe, one at a time", early)
	}
}
