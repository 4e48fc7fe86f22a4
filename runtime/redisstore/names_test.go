package redisstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

func TestNames(t *testing.T) {
	s, c := newStore(t)
	ctx := context.Background()
	b := circuit.New(s)
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: time.Second}
	for _, name := range []string{"billing-api", "payments", "ledger", "mail-api"} {
		if err := b.Run(ctx, name, p, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, nil }); err != nil {
			t.Fatal(err)
		}
	}
	corrupt := map[string]func() error{
		"ledger": func() error { return setField(fieldState, "ajar")(ctx, c, s.Key("ledger")) },
		"mail-api": func() error {
			return errors.Join(c.Del(ctx, s.Key("mail-api")).Err(), c.HSet(ctx, s.Key("mail-api"), "state", "open").Err())
		},
	}
	for _, f := range corrupt {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	// Not record keys: skipped. A store under another prefix: not seen.
	prefix := strings.TrimSuffix(s.Key("x"), circuit.Key("x"))
	if err := c.Set(ctx, prefix+"lock", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	other := open(t, c, redisstore.WithPrefix(prefix+"other:"))
	if err := circuit.New(other).Run(ctx, "elsewhere", p, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
		t.Fatal(err)
	}

	names, err := s.Names(ctx)
	if want := []string{"billing-api", "payments"}; !slices.Equal(names, want) {
		t.Errorf("Names = %q, want %q", names, want)
	}
	if !errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("Names error = %v, want the corrupt records", err)
	}
	for name := range corrupt {
		if !strings.Contains(err.Error(), s.Key(name)) {
			t.Errorf("Names error does not name %s's key %s: %v", name, s.Key(name), err)
		}
	}
}
