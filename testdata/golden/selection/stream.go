package selection

import (
	"context"
	"errors"
)

// ErrNoResponders is the stream's outage.
var ErrNoResponders = errors.New("stream: no responders")

// Stream is a client that is neither HTTP nor gRPC: HTTP statuses and gRPC
// codes can match nothing it returns.
//
//circuitgen:guard circuit=stream statuses=502-504
type Stream interface {
	Publish(ctx context.Context, subject string, data []byte) error
	Info(ctx context.Context) (string, error)
	//circuitgen:circuit stream:codes codes=Unavailable
	Ack(ctx context.Context) error
	//circuitgen:circuit stream:errors errors=ErrNoResponders
	Request(ctx context.Context, subject string) ([]byte, error)
}
