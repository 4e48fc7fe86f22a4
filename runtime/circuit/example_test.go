package circuit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// A Breaker over a file store, shared by every process that opens the same
// directory. Three failures open the circuit; the next call fails fast.
func Example() {
	dir, _ := os.MkdirTemp("", "circuits")
	defer os.RemoveAll(dir)
	store, err := filestore.Open(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	b := circuit.New(store)
	policy := circuit.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second}
	refused := errors.New("connection refused")
	call := func(ctx context.Context) (circuit.Outcome, error) { return circuit.Failure, refused }

	for range 3 {
		err = b.Run(context.Background(), "billing-api", policy, call)
	}
	fmt.Println(err)
	err = b.Run(context.Background(), "billing-api", policy, call)
	var open *circuit.OpenError
	if errors.As(err, &open) {
		fmt.Println("rejected; retry after", open.RetryAfter().Round(time.Second))
	}
	// Output:
	// connection refused
	// rejected; retry after 30s
}
