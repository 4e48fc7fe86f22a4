package errqueue

import "context"

// Cmder is a queued command, as go-redis's is.
type Cmder interface {
	Err() error
	SetErr(err error)
}

// StatusCmd carries its error, as go-redis commands do.
type StatusCmd struct{ err error }

// Err returns the command's error.
func (c *StatusCmd) Err() error { return c.err }

// SetErr sets the command's error.
func (c *StatusCmd) SetErr(err error) { c.err = err }

// Pipe queues commands and Exec sends them. A queued command named with a
// circuit is refused: it carries no error until Exec has run.
//
//circuitgen:guard circuit=cache errors=context.DeadlineExceeded
type Pipe interface {
	//circuitgen:circuit cache
	Ping(ctx context.Context) *StatusCmd
	Exec(ctx context.Context) ([]Cmder, error)
}
