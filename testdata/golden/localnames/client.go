package localnames

import "context"

// Package-level names the generated ones must not take.
var (
	q                int
	classifyNamesErr int
	classifyNames    int
)

func op() {}

// Client is a client whose parameters take the names of the generated
// method's locals (op, q, o, err): the locals take others.
//
//circuitgen:guard circuit=names errors=context.DeadlineExceeded
type Client interface {
	Call(ctx context.Context, op, q, o string, err error) (string, error)
	Ping(op func(context.Context) error, q int) error
}
