package errcarrierkinds

import "context"

// Result is a carrier of its error, but an interface: no wrapper can make
// one to carry a rejection.
type Result interface {
	Err() error
	SetErr(error)
	Val() string
}

// Cmd is a carrier whose SetErr is a method of *Cmd: a Cmd returned by
// value cannot be made to carry a rejection.
type Cmd struct{ err error }

// Err returns the command's error.
func (c Cmd) Err() error { return c.err }

// SetErr sets the command's error.
func (c *Cmd) SetErr(e error) { c.err = e }

// Client returns carriers the wrapper cannot make.
//
//circuitgen:guard circuit=client errors=context.DeadlineExceeded
type Client interface {
	Get(ctx context.Context) Result
	Do(ctx context.Context) Cmd
}
