package circuittest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Kit is a Breaker for a test, over a store, with a Clock the test moves by
// hand, and helpers that put a circuit in a state directly. The helpers
// write the circuit's record in the store, as another process of the
// application might have: observers hear nothing of them, and the next call
// sees the state they leave. Like httptest's, they panic when the store
// fails or a name is invalid: in a test, both are bugs.
type Kit struct {
	// Breaker decides by Clock; give it to the code under test.
	Breaker *circuit.Breaker
	// Store is the Kit's store.
	Store driver.Store
	// Clock is the time of every decision.
	Clock *Clock
}

// New returns a Kit over a new in-memory Store. opts are the Breaker's;
// the Kit adds circuit.WithClock of its Clock.
func New(opts ...circuit.Option) *Kit { return NewWith(NewStore(), opts...) }

// NewWith returns a Kit over store, for a test of the application over the
// store it runs with.
func NewWith(store driver.Store, opts ...circuit.Option) *Kit {
	clock := NewClock(time.Time{})
	opts = append([]circuit.Option{circuit.WithClock(clock.Now)}, opts...)
	return &Kit{Breaker: circuit.New(store, opts...), Store: store, Clock: clock}
}

// Advance moves the Kit's Clock on by d.
func (k *Kit) Advance(d time.Duration) { k.Clock.Advance(d) }

// Open leaves the named circuit open for d from now, as its threshold of
// failures would: calls are rejected with a *circuit.OpenError until the
// Clock passes d, and then the next call is the half-open probe.
func (k *Kit) Open(name string, d time.Duration) {
	k.put(name, func(r *driver.Record, now time.Time) {
		r.State = driver.StateOpen
		r.Failures = max(r.Failures, 1)
		r.OpenUntil = now.Add(d)
	})
}

// HalfOpen leaves the named circuit ready to probe, its cooldown over (it
// reads StateHalfOpen): the next call claims the half-open probe, and calls
// are rejected while it runs.
func (k *Kit) HalfOpen(name string) {
	k.put(name, func(r *driver.Record, now time.Time) {
		r.State = driver.StateOpen
		r.Failures = max(r.Failures, 1)
		r.OpenUntil = now
	})
}

// Close leaves the named circuit closed, with no failures counted.
func (k *Kit) Close(name string) {
	k.put(name, func(r *driver.Record, now time.Time) {
		if r.State != driver.StateClosed {
			r.Generation++
		}
		r.State = driver.StateClosed
		r.Failures, r.Reopens = 0, 0
	})
}

// State returns the named circuit's state now, as Breaker.Snapshot reads it.
func (k *Kit) State(name string) circuit.State {
	snap, err := k.Breaker.Snapshot(context.Background(), name)
	if err != nil {
		panic(fmt.Sprintf("circuittest: %v", err))
	}
	return snap.State
}

// RequireState fails tb at once unless the named circuit is in state want.
func (k *Kit) RequireState(tb testing.TB, name string, want circuit.State) {
	tb.Helper()
	if got := k.State(name); got != want {
		tb.Fatalf("circuit %s is %s, want %s", name, got, want)
	}
}

// put replaces the named circuit's record with the one set makes of it: a
// copy of the stored one with no probe, hold or run of successes, or a new
// closed one when there is none.
func (k *Kit) put(name string, set func(r *driver.Record, now time.Time)) {
	if err := circuit.ValidateName(name); err != nil {
		panic(fmt.Sprintf("circuittest: %v", err))
	}
	ctx := context.Background()
	for range 100 {
		cur, _, err := k.Store.Load(ctx, name)
		if err != nil {
			panic(fmt.Sprintf("circuittest: loading circuit %s: %v", name, err))
		}
		now := k.Clock.Now().UTC().Truncate(time.Millisecond) // the precision every store keeps
		next := &driver.Record{Name: name, Generation: 1, Incarnation: driver.NewID(), Version: 1}
		if cur != nil {
			c := *cur
			c.Version++
			next = &c
		}
		next.UpdatedAt = now
		next.ProbeToken, next.LeaseUntil, next.OpenUntil = "", time.Time{}, time.Time{}
		next.Successes, next.Forced = 0, false
		set(next, now)
		if err := next.Check(); err != nil {
			panic(fmt.Sprintf("circuittest: circuit %s: %v", name, err))
		}
		err = k.Store.Replace(ctx, name, cur, next)
		if err == nil {
			return
		}
		if !errors.Is(err, driver.ErrConflict) {
			panic(fmt.Sprintf("circuittest: storing circuit %s: %v", name, err))
		}
	}
	panic(fmt.Sprintf("circuittest: circuit %s kept changing under the Kit", name))
}
