package sqlstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// reports is an EventObserver that keeps the store's reports.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (r *reports) ObserveTransition(circuit.Transition) {}

func (r *reports) ObserveEvent(e circuit.Event) {
	r.mu.Lock()
	r.errs = append(r.errs, e.Err)
	r.mu.Unlock()
}

func (r *reports) has(target error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, err := range r.errs {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// rowColumns are the columns a restore puts back.
const rowColumns = "state, failure_count, generation, incarnation, version, open_until, probe_token, lease_until, updated_at, policy_state"

// TestRolledBackRowFailsClosed opens a circuit for a minute, then puts its
// row back as it was while closed, as a restore from a backup (or a
// failover to a replica that had not caught up) does: the store must not
// take the old row for a closed circuit. Eight callers at once get one
// probe, the others are rejected until it succeeds, and driver.ErrLost is
// reported; with copies and without.
func TestRolledBackRowFailsClosed(t *testing.T) {
	for _, be := range []backend{backends[0], cachedPostgres} {
		t.Run(be.name, func(t *testing.T) {
			s, db := be.newStore(t)
			ev := &reports{}
			b := circuit.New(s, circuit.WithObserver(ev))
			ctx := t.Context()
			const name = "billing-api"
			for range 3 {
				_ = b.Run(ctx, name, policy, op(circuit.Success))
			}
			var backup string
			if err := db.QueryRowContext(ctx, "SELECT row_to_json(c)::text FROM circuits c WHERE name = $1", name).Scan(&backup); err != nil {
				t.Fatal(err)
			}
			if err := b.ForceOpen(ctx, name, time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := b.Run(ctx, name, policy, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
				t.Fatalf("Run on the open circuit = %v", err)
			}
			if _, err := db.ExecContext(ctx, "UPDATE circuits SET ("+rowColumns+") = (SELECT "+rowColumns+
				" FROM json_populate_record(NULL::circuits, $1::json)) WHERE name = $2", backup, name); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // the restore's notification drops the copy
			var (
				mu       sync.Mutex
				admitted []time.Time
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
						_ = b.Run(cctx, name, policy, func(context.Context) (circuit.Outcome, error) {
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
			t.Logf("%d admitted, %d begun before the first admitted ended; ErrLost reported: %v", len(admitted), early, ev.has(driver.ErrLost))
			if early != 1 {
				t.Errorf("%d calls admitted before the first admitted one ended, want 1: a probe, one at a time", early)
			}
			if !ev.has(driver.ErrLost) {
				t.Error("the rollback was not reported as an event wrapping driver.ErrLost")
			}
		})
	}
}
