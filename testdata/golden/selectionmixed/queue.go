package selectionmixed

import (
	"context"
	"errors"
)

// ErrNoResponders is the queue's outage.
var ErrNoResponders = errors.New("queue: no responders")

// Queue is a client that is neither HTTP nor gRPC. Each selection is
// checked on its own: statuses= and codes= match nothing it returns,
// whatever else is selected beside them.
//
//circuitgen:guard circuit=queue errors=ErrNoResponders statuses=502-504
type Queue interface {
	Publish(ctx context.Context, subject string, data []byte) error
	//circuitgen:circuit queue:ack errors=ErrNoResponders codes=Unavailable
	Ack(ctx context.Context) error
	//circuitgen:circuit queue:nak statuses=503 codes=Unavailable
	Nak(ctx context.Context) error
}
