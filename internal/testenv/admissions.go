package testenv

import (
	"context"
	"sync"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// Admissions records when each admitted call of a CallLoop began. It is
// safe for concurrent use.
type Admissions struct {
	mu    sync.Mutex
	began []time.Time
}

// Late returns how many admitted calls began more than bound after t, and
// how long after t the last admitted call began (0 when none began after
// it).
func (a *Admissions) Late(t time.Time, bound time.Duration) (n int, last time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.began {
		if b.Sub(t) > bound {
			n++
		}
		last = max(last, b.Sub(t))
	}
	return n, last
}

// CallLoop makes healthy calls on the named circuit of b, each under a 2 s
// context, until ctx ends, and records in a when each admitted one began.
func CallLoop(ctx context.Context, b *circuit.Breaker, name string, p circuit.Policy, a *Admissions) {
	for ctx.Err() == nil {
		began := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ran := false
		_ = b.Run(cctx, name, p, func(context.Context) (circuit.Outcome, error) {
			ran = true
			return circuit.Success, nil
		})
		cancel()
		if ran {
			a.mu.Lock()
			a.began = append(a.began, began)
			a.mu.Unlock()
		}
		time.Sleep(200 * time.Microsecond)
	}
}
