//go:build linux || darwin

package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// Two failures open the circuit; the third call is rejected without being
// made, and every process that opens the same directory sees it open.
func Example() {
	base, err := os.MkdirTemp("", "circuits-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(base)

	store, err := filestore.Open(filepath.Join(base, "state")) // a *filestore.DirError says what to fix
	if err != nil {
		log.Fatal(err)
	}
	b := circuit.New(store)
	p := circuit.Policy{FailureThreshold: 2, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}
	down := errors.New("billing down")
	for range 3 {
		err := b.Run(context.Background(), "billing-api", p, func(context.Context) (circuit.Outcome, error) {
			return circuit.Failure, down
		})
		fmt.Println(err)
	}
	snap, err := b.Snapshot(context.Background(), "billing-api")
	fmt.Println(snap.State, err)
	// Output:
	// billing down
	// billing down
	// circuit billing-api is open: retry after 30s
	// open <nil>
}
