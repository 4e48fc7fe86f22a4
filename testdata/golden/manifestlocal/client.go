package manifestlocal

import (
	"context"
	"errors"
)

// ErrDown means the service is down.
var ErrDown = errors.New("down")

// Client cannot be annotated by its owners, so the manifest lists it.
type Client interface {
	Get(ctx context.Context, id string) (string, error)
	List(ctx context.Context) ([]string, error)
	Name() string
}
