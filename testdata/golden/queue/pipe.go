package queue

import (
	"context"
	"errors"
)

// Cmder is a queued command, as go-redis's is.
type Cmder interface {
	Err() error
	SetErr(err error)
}

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

// Pipe queues commands and Exec sends them, as go-redis's Pipeliner does:
// only Exec makes a call, so only Exec is guarded. Get's command carries
// no error until Exec has run; guarded, it would count a success.
//
//circuitgen:guard circuit=cache errors=ErrDown
type Pipe interface {
	Get(ctx context.Context, key string) *StringCmd
	Process(ctx context.Context, cmd Cmder) error
	Len() int
	Exec(ctx context.Context) ([]Cmder, error)
}
