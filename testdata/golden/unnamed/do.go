package unnamed

import (
	"context"
	"io"
)

// Doer does things.
//
//circuitgen:guard circuit=doer errors=io.ErrUnexpectedEOF
type Doer interface {
	Do(context.Context, string, int) (int, error)
	Copy(io.Writer, io.Reader) (int64, error)
	Blank(_ context.Context, _ string, n int) error
	Mixed(_, b string, _ []int) (string, string, error)
}
