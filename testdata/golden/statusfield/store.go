package statusfield

import (
	"context"

	"github.com/circuitgen/circuitgen/testdata/golden/statusfield/sdk"
)

// Fault is this package's own error, a status in its Code field.
type Fault struct{ Code int }

func (f Fault) Error() string { return "fault" }

// coded reports its status through Code() int.
type coded struct{ status int }

func (c *coded) Error() string { return "coded" }

// Code returns the status.
func (c *coded) Code() int { return c.status }

// Store is a client of the SDK: statuses= reads each error's status field.
//
//circuitgen:guard circuit=store statuses=429,500-599
type Store interface {
	Get(ctx context.Context, key string) (*sdk.Object, error)
	Put(ctx context.Context, key string, o *sdk.Object) error
}
