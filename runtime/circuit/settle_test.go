package circuit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// lockedStore is a memStore whose writes wait for a lock another writer
// holds until release is closed, honouring ctx as a real store's lock wait
// does (the file store's flock, a database's row lock).
type lockedStore struct {
	*memStore
	release chan struct{}
}

func (s *lockedStore) Replace(ctx context.Context, name string, prev, next *driver.Record) error {
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.memStore.Replace(ctx, name, prev, next)
}

// TestSettleOutlivesTheCallersContext checks that an operation's outcome is
// recorded however close to its context's end the operation returned:
// before the end with a lock wait that outlasts it, at the end, or after.
func TestSettleOutlivesTheCallersContext(t *testing.T) {
	boom := errors.New("boom")
	const held = 150 * time.Millisecond // how long the other writer holds the lock
	tests := []struct {
		name string
		// ctx returns the caller's context; call runs one failing call
		// through b on it with the API under test.
		ctx  func() (context.Context, context.CancelFunc)
		call func(ctx context.Context, b *circuit.Breaker) error
	}{
		{"Run returns 30ms before the deadline", deadlineIn(30 * time.Millisecond), runFailing(boom)},
		{"Run returns after the deadline", deadlineIn(time.Millisecond), func(ctx context.Context, b *circuit.Breaker) error {
			return b.Run(ctx, testName, pol, func(ctx context.Context) (circuit.Outcome, error) {
				<-ctx.Done()
				return circuit.Failure, boom
			})
		}},
		{"Run's caller cancels while it settles", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(30*time.Millisecond, cancel)
			return ctx, cancel
		}, runFailing(boom)},
		{"Done 30ms before Allow's deadline", deadlineIn(30 * time.Millisecond), func(ctx context.Context, b *circuit.Breaker) error {
			tk, err := b.Allow(ctx, testName, pol)
			if err != nil {
				return err
			}
			if err := tk.Done(circuit.Failure); err != nil {
				return err
			}
			return boom
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newClock()
			s := &lockedStore{memStore: newMemStore(t, clock), release: make(chan struct{})}
			b := circuit.New(s, circuit.WithClock(clock.Now))
			close(s.release)
			if err := b.Run(t.Context(), testName, pol, succeed); err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{}) // another writer takes the lock
			s.release = release
			time.AfterFunc(held, func() { close(release) })

			ctx, cancel := tt.ctx()
			defer cancel()
			err := tt.call(ctx, b)
			if err != boom {
				t.Fatalf("call = %v, want the operation's error alone", err)
			}
			if r := s.rec(testName); r.Failures != 1 {
				t.Fatalf("the failure was lost: %s", fmtRecord(r))
			}
		})
	}
}

func deadlineIn(d time.Duration) func() (context.Context, context.CancelFunc) {
	return func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), d)
	}
}

func runFailing(err error) func(context.Context, *circuit.Breaker) error {
	return func(ctx context.Context, b *circuit.Breaker) error {
		return b.Run(ctx, testName, pol, failing(err))
	}
}
