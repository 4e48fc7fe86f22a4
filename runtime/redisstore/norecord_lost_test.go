//go:build unix

package redisstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// TestLostRecordOfCircuitOpenedWhileHealthyHere: process A runs healthy
// calls on a circuit with no record (it keeps a copy of none and writes
// nothing). Process B (its own client and store) then fails the circuit
// open: B's first failure creates the record, its third opens it. A makes
// no call meanwhile. The server then loses the record (restarted without
// persistence, flushed, the key evicted). A's next calls must not be
// admitted as closed: the creation's invalidation, which dropped A's copy
// of none, told A a record exists, so its absence is a loss (one probe).
func TestLostRecordOfCircuitOpenedWhileHealthyHere(t *testing.T) {
	for _, tt := range []struct {
		name    string
		persist bool
		lose    func(t *testing.T, srv *server)
	}{
		{"RestartWithoutPersistence", false, func(t *testing.T, srv *server) { srv.restart(t) }},
		{"FlushAll", true, func(t *testing.T, srv *server) { srv.do(t, "FLUSHALL") }},
		{"KeyEvicted", true, func(t *testing.T, srv *server) { srv.do(t, "DEL", srv.key) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, tt.persist)
			ctx := t.Context()
			const name = "billing-api"

			ca := unixClient(t, srv.sock)
			sa := open(t, ca, redisstore.WithCopies(testStall))
			testenv.WaitFor(t, 5*time.Second, "A's invalidation connection is up", sa.Live)
			eva := &events{}
			a := circuit.New(sa, circuit.WithObserver(eva))
			srv.key = sa.Key(name)

			for range 5 { // healthy: no record, A keeps a copy of none
				if err := a.Run(ctx, name, policy, op(circuit.Success)); err != nil {
					t.Fatal(err)
				}
			}
			if n, _ := ca.Exists(ctx, srv.key).Result(); n != 0 {
				t.Fatalf("a record after healthy calls only")
			}

			cb := unixClient(t, srv.sock)
			sb := open(t, cb, redisstore.WithCopies(testStall))
			b := circuit.New(sb)
			for range policy.FailureThreshold {
				_ = b.Run(ctx, name, policy, op(circuit.Failure))
			}
			if err := b.Run(ctx, name, policy, op(circuit.Success)); !errors.Is(err, circuit.ErrOpen) {
				t.Fatalf("B's Run on the circuit it opened = %v", err)
			}

			tt.lose(t, srv)
			// A's copy of none went with the record's creation (or the
			// stream's loss); wait until A's stream is live again, as a
			// process that carries on would be.
			testenv.WaitFor(t, 5*time.Second, "A's invalidation connection is up", sa.Live)

			testenv.RequireOneProbe(t, a, name, policy)
			if !eva.has(driver.ErrLost) {
				t.Error("A did not report the loss of the open circuit's record (driver.ErrLost)")
			}
		})
	}
}
