package statusdeep

import (
	"context"

	"github.com/circuitgen/circuitgen/testdata/golden/statusdeep/sdk"
)

// Store is the part of an SDK's client this package calls: the status its
// errors carry is declared two imports away, in a package the generator
// reads only in part, so statuses= beside errors= draws no warning.
//
//circuitgen:guard circuit=store errors=context.DeadlineExceeded statuses=500-599
type Store interface {
	Get(ctx context.Context, in *sdk.GetInput) (*sdk.GetOutput, error)
}
