package namedresults

import "context"

// ErrBusy means try later.
var ErrBusy = errBusy{}

type errBusy struct{}

func (errBusy) Error() string { return "busy" }

// Counter counts.
//
//circuitgen:guard circuit=counter errors=ErrBusy,errBusy
type Counter interface {
	Count(ctx context.Context) (n int, err error)
	Pair(ctx context.Context) (a, b string, err error)
}
