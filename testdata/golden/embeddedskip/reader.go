package embeddedskip

import (
	"context"
	"io"
)

// Source embeds io.ReadCloser: skip= reaches its Read, and Close passes
// through because nothing names it.
//
//circuitgen:guard circuit=source errors=io.ErrUnexpectedEOF skip=Read
type Source interface {
	io.ReadCloser
	Fetch(ctx context.Context, id string) ([]byte, error)
}
