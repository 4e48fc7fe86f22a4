package carrieralias

import (
	"context"
	"errors"
)

// Cmd carries a result and its error.
type Cmd struct{ err error }

// Err returns the command's error.
func (c *Cmd) Err() error { return c.err }

// SetErr sets the command's error.
func (c *Cmd) SetErr(err error) { c.err = err }

// CmdP names the pointer through an alias.
type CmdP = *Cmd

// CmdA names the command through an alias.
type CmdA = Cmd

// ErrDown is a failure of the cache.
var ErrDown = errors.New("cache down")

// Cache returns commands through aliases.
//
//circuitgen:guard circuit=cache errors=ErrDown
type Cache interface {
	Get(ctx context.Context, key string) CmdP
	Del(ctx context.Context, key string) *CmdA
}
