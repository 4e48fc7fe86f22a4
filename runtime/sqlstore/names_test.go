package sqlstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func TestNames(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			s, db := be.newStore(t)
			ctx := context.Background()
			if names, err := s.Names(ctx); len(names) != 0 || err != nil {
				t.Fatalf("empty store: Names = %q, %v", names, err)
			}
			b := circuit.New(s)
			p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: time.Second}
			for _, name := range []string{"payments", "billing-api", "ledger"} {
				if err := b.Run(ctx, name, p, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, nil }); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.ExecContext(ctx, "UPDATE circuits SET state = 'ajar' WHERE name = 'ledger'"); err != nil {
				t.Fatal(err)
			}
			names, err := s.Names(ctx)
			if want := []string{"billing-api", "payments"}; !slices.Equal(names, want) {
				t.Errorf("Names = %q, want %q", names, want)
			}
			if !errors.Is(err, driver.ErrCorrupt) || !strings.Contains(err.Error(), `circuit "ledger" (row`) {
				t.Errorf("Names error = %v, want ledger's row reported corrupt", err)
			}
		})
	}
}
