package duplicateentries

import (
	"context"
	stdctx "context"
	"errors"
)

// DownError is a failure.
type DownError struct{}

func (*DownError) Error() string { return "down" }

// ErrBusy is a failure.
var ErrBusy = errors.New("busy")

// API selects some entries twice, as written or by another name.
//
//circuitgen:guard circuit=api errors=context.Canceled,context.Canceled,stdctx.Canceled,*DownError,*DownError,ErrBusy,ErrBusy statuses=503,503-503,500-599,500-599 codes=Unavailable,Unavailable
type API interface {
	Get(ctx context.Context) error
	Put(ctx stdctx.Context) error
}
