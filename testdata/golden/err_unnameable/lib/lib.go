// Package lib has an interface whose methods use types that no package
// outside it can write.
package lib

import (
	"context"

	"github.com/circuitgen/circuitgen/testdata/golden/err_unnameable/lib/internal/secret"
)

// API uses an internal type, and type literals with unexported names.
type API interface {
	Auth(ctx context.Context) (secret.Token, error)
	Put(ctx context.Context, s struct{ n int }) error
	Watch(ctx context.Context, f interface{ m() }) error
	Get(ctx context.Context, s struct{ N int }) error
}
