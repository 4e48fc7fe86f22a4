package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/redis/go-redis/v9"
)

// A Breaker over Redis with local copies: healthy calls make no round trip
// once the circuit's copy is read; an opening by any process reaches every
// other within the stall bound.
func Example() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	store, err := redisstore.New(ctx, client, redisstore.WithCopies(time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	b := circuit.New(store, circuit.WithObserver(circuit.SlogObserver(slog.Default()))) // hears unsafe settings, lost records
	err = b.Run(ctx, "billing-api", circuit.Policy{FailureThreshold: 3}, func(ctx context.Context) (circuit.Outcome, error) {
		return circuit.Success, nil
	})
	fmt.Println(err)
}
