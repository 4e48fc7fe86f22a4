package storeurl_test

import (
	"context"
	"fmt"
	"os"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/storeurl"
)

// Open the store a URL names, and give it to circuit.New as it is.
func Example() {
	dir, _ := os.MkdirTemp("", "circuits")
	defer os.RemoveAll(dir)
	s, err := storeurl.Open(context.Background(), "file://"+dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	b := circuit.New(s)
	_ = b.Run(context.Background(), "billing-api", circuit.Policy{}, func(context.Context) (circuit.Outcome, error) {
		return circuit.Failure, nil
	})
	names, err := s.Names(context.Background())
	fmt.Println(names, err)
	// Output: [billing-api] <nil>
}
