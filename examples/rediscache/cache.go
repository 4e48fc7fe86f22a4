// Package rediscache guards a go-redis client: its commands carry their own
// error (Err() error), so the guarded client returns a command carrying the
// *circuit.OpenError when the circuit is open. A network error (net.Error:
// refused, reset, timed out) is a failure; a missing key (redis.Nil) is not.
package rediscache

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:generate go tool circuitgen

// Cache is the part of *redis.Client the application uses. Close passes
// through unguarded: an open circuit never refuses to release a resource.
//
//circuitgen:guard circuit=cache threshold=3 cooldown=1s lease=1s errors=net.Error,context.DeadlineExceeded
type Cache interface {
	Get(ctx context.Context, key string) *redis.StringCmd
	Set(ctx context.Context, key string, value any, expiration time.Duration) *redis.StatusCmd
	Close() error
}

var _ Cache = (*redis.Client)(nil)
