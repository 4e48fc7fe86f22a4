package errqueue

import "context"

// Cmder is a queued command, as go-redis's is.
type Cmder interface {
	Err() error
	SetErr(err error)
}

// Pipe queues commands and Exec sends them, as go-redis's Pipeliner does:
// a queued command carries no error until Exec has run, and an Exec of an
// empty queue sends nothing, so Pipe is refused.
//
//circuitgen:guard circuit=cache errors=context.DeadlineExceeded
type Pipe interface {
	Process(ctx context.Context, cmd Cmder) error
	Exec(ctx context.Context) ([]Cmder, error)
}
