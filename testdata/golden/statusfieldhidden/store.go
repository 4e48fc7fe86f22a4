package statusfieldhidden

import (
	"context"

	"github.com/circuitgen/circuitgen/testdata/golden/statusfieldhidden/sdk"
)

// Store is a client of an SDK whose error type is unexported.
//
//circuitgen:guard circuit=store statuses=500-599
type Store interface {
	Get(ctx context.Context, key string) (*sdk.Object, error)
}
