package unexported

import "context"

// svc is unexported: its wrapper and constructor are too.
//
//circuitgen:guard circuit=svc errors=context.DeadlineExceeded
type svc interface {
	Do(ctx context.Context) error
}
