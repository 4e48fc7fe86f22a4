package circuittest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver/drivertest"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

func TestConformance(t *testing.T) {
	drivertest.Run(t, drivertest.Config{
		Open: func(t *testing.T) driver.Store { return circuittest.NewStore() },
	})
}

const name = "billing-api"

var policy = circuit.Policy{FailureThreshold: 3, Cooldown: time.Minute, ProbeLease: 10 * time.Second}

var errDown = errors.New("down")

func succeed(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }

// TestKit walks a circuit through every helper, over the in-memory store
// and over the file store.
func TestKit(t *testing.T) {
	stores := map[string]func(t *testing.T) driver.Store{
		"memory": func(t *testing.T) driver.Store { return circuittest.NewStore() },
		"filestore": func(t *testing.T) driver.Store {
			s, err := filestore.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for kind, open := range stores {
		t.Run(kind, func(t *testing.T) {
			k := circuittest.NewWith(open(t))
			ctx := context.Background()
			k.RequireState(t, name, circuit.StateClosed)

			k.Open(name, time.Minute)
			k.RequireState(t, name, circuit.StateOpen)
			err := k.Breaker.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) {
				t.Error("an open circuit ran the operation")
				return circuit.Success, nil
			})
			var open *circuit.OpenError
			if !errors.As(err, &open) || open.RetryAfter() != time.Minute {
				t.Fatalf("call while open = %v, want an OpenError retrying after 1m", err)
			}
			k.Advance(20 * time.Second) // a later rejection tells the time left then
			if err := k.Breaker.Run(ctx, name, policy, succeed); !errors.As(err, &open) || open.RetryAfter() != 40*time.Second {
				t.Fatalf("call 20s later = %v, want an OpenError retrying after 40s", err)
			}
			k.Advance(40 * time.Second)

			release := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // the probe, held until released
				defer wg.Done()
				if err := k.Breaker.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) {
					<-release
					return circuit.Success, nil
				}); err != nil {
					t.Errorf("the probe after the cooldown = %v", err)
				}
			}()
			for { // until the probe holds its claim
				rec, _, err := k.Store.Load(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				if rec != nil && rec.ProbeToken != "" {
					break
				}
				time.Sleep(time.Millisecond)
			}
			if err := k.Breaker.Run(ctx, name, policy, succeed); !errors.As(err, &open) || open.State != circuit.StateHalfOpen {
				t.Errorf("a call beside the probe = %v, want rejected half-open", err)
			}
			close(release)
			wg.Wait()
			k.RequireState(t, name, circuit.StateClosed)

			k.HalfOpen(name)
			if err := k.Breaker.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errDown }); !errors.Is(err, errDown) {
				t.Fatalf("the probe of HalfOpen = %v, want it run", err)
			}
			k.RequireState(t, name, circuit.StateOpen)

			k.Close(name)
			k.RequireState(t, name, circuit.StateClosed)
			for range 2 {
				_ = k.Breaker.Run(ctx, name, policy, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errDown })
			}
			k.RequireState(t, name, circuit.StateClosed) // Close left no failures: 2 of 3
		})
	}
}

// TestStoreSharesWindow: two Breakers over one Store count in one window,
// of time or of calls.
func TestStoreSharesWindow(t *testing.T) {
	for _, rate := range []circuit.Policy{
		{FailureRate: 0.5, MinCalls: 4, Window: time.Minute},
		{FailureRate: 0.5, MinCalls: 4, WindowCalls: 4},
	} {
		s := circuittest.NewStore()
		clock := circuittest.NewClock(time.Time{})
		a := circuit.New(s, circuit.WithClock(clock.Now))
		b := circuit.New(s, circuit.WithClock(clock.Now))
		fail := func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errDown }
		for i, br := range []*circuit.Breaker{a, b, a, b} {
			op := succeed
			if i%2 == 1 {
				op = fail
			}
			_ = br.Run(context.Background(), name, rate, op)
		}
		snap, err := a.Snapshot(context.Background(), name)
		if err != nil || snap.State != circuit.StateOpen {
			t.Fatalf("%+v: after 2 failures in 4 calls over two Breakers: %+v, %v; want open", rate, snap, err)
		}
	}
}

// TestInvalidNamePanics: a helper given a bad name says so.
func TestInvalidNamePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("Open with an invalid name did not panic")
		}
	}()
	circuittest.New().Open("https://billing.example", time.Minute)
}
