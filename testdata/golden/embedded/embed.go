package embedded

import (
	"context"
	"io"
)

// Reader reads records.
type Reader interface {
	Read(ctx context.Context, id string) ([]byte, error)
}

// Repo embeds a local interface and two from the standard library; their
// methods take the interface's circuit.
//
//circuitgen:guard circuit=repo errors=io.ErrUnexpectedEOF,context.DeadlineExceeded
type Repo interface {
	Reader
	io.Closer
	io.WriterTo
	//circuitgen:circuit repo-write threshold=2
	Write(ctx context.Context, id string, data []byte) error
}
