package testenv

import (
	"context"
	"sync"
	"sync/atomic"
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

// RequireNoneClosedWhileLost has lose (which reports whether it removed
// the circuit's record) run in a loop for a second, as an eviction storm
// would, while four callers call the named circuit of b under p, every
// call failing; it fails the test if any call was admitted as closed, or
// none as a probe: a record lost again while it is made unknown must never
// read as no record.
func RequireNoneClosedWhileLost(t *testing.T, b *circuit.Breaker, name string, p circuit.Policy, lose func() bool) {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(time.Second)
	var losses, closed, probes atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for time.Now().Before(deadline) {
			if lose() {
				losses.Add(1)
			}
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				tk, err := b.Allow(ctx, name, p)
				if err != nil {
					continue // refused, or the store's error: no call ran
				}
				if tk.Probe() {
					probes.Add(1)
				} else {
					closed.Add(1)
				}
				_ = tk.Done(circuit.Failure)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d losses: %d calls admitted as closed, %d probes", losses.Load(), closed.Load(), probes.Load())
	if closed.Load() != 0 || probes.Load() == 0 {
		t.Errorf("%d calls admitted as closed, %d probes; want none as closed, and probes", closed.Load(), probes.Load())
	}
}
