package sqlstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// A Breaker over PostgreSQL with local copies: healthy calls make no round
// trip once the circuit's copy is read; an opening by any process reaches
// every other within the stall bound.
func Example() {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig("postgres://app@localhost/app")
	if err != nil {
		fmt.Println(err)
		return
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	store, err := sqlstore.New(ctx, db, sqlstore.Postgres, sqlstore.WithCopies(time.Second))
	if err != nil {
		fmt.Println(err) // a notify trigger missing: run store.Migrate at deployment
		return
	}
	defer store.Close()
	b := circuit.New(store, circuit.WithObserver(circuit.SlogObserver(slog.Default())))
	err = b.Run(ctx, "billing-api", circuit.Policy{FailureThreshold: 3}, func(ctx context.Context) (circuit.Outcome, error) {
		return circuit.Success, nil
	})
	fmt.Println(err)
}
