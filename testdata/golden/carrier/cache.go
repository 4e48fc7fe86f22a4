package carrier

import (
	"context"
	"errors"
)

// StringCmd carries a result and its error, as go-redis commands do.
type StringCmd struct {
	val string
	err error
}

// Err returns the command's error.
func (c *StringCmd) Err() error { return c.err }

// SetErr sets the command's error.
func (c *StringCmd) SetErr(err error) { c.err = err }

// Val returns the command's value.
func (c *StringCmd) Val() string { return c.val }

// ErrDown is a failure of the cache.
var ErrDown = errors.New("cache down")

// Cache returns commands that carry their own error; Close passes through
// because no directive names it.
//
//circuitgen:guard circuit=cache errors=ErrDown
type Cache interface {
	Get(ctx context.Context, key string) *StringCmd
	Set(ctx context.Context, key, val string) error
	Close() error
}
