package variadic

import "context"

// Sender sends messages.
//
//circuitgen:guard circuit=mail errors=context.DeadlineExceeded
type Sender interface {
	Send(ctx context.Context, to string, parts ...[]byte) error
	SendAll(context.Context, ...string) (int, error)
	Format(format string, args ...any) (string, error)
}
