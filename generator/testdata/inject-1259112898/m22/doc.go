package man

import "context"

// API is listed in the manifest.
type API interface {
	Get(ctx context.Context) error
}

// T is a local error type.
type T struct{}

func (*T) Error() string { return "t" }
