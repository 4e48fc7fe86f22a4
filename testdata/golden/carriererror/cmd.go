package carriererror

import (
	"context"
	"errors"
)

// Reply is a command's reply: it reports the command's error with
// Error() error, and has no SetErr.
type Reply struct {
	val string
	err error
}

// Error returns the reply's error.
func (r Reply) Error() error { return r.err }

// Val returns the reply's value.
func (r Reply) Val() string { return r.val }

// ErrorReply returns a reply carrying err.
func ErrorReply(err error) Reply { return Reply{err: err} }

// Status is a command's status: it reports its error with Error() error,
// and SetErr sets it, as a go-redis command's does through Err.
type Status struct{ err error }

// Error returns the status's error.
func (s *Status) Error() error { return s.err }

// SetErr sets the status's error.
func (s *Status) SetErr(err error) { s.err = err }

// ErrDown is the server's outage.
var ErrDown = errors.New("server down")

// Client sends commands whose replies carry their error.
//
//circuitgen:guard circuit=cmd errors=ErrDown
type Client interface {
	Do(ctx context.Context, args ...string) Reply
	Ping(ctx context.Context) *Status
}
