package stream

import (
	"context"

	"google.golang.org/grpc"
)

// Request and Event are messages.
type (
	Request struct{ Key string }
	Event   struct{ Value string }
)

// WatchClient is shaped like a generated gRPC client of a
// server-streaming method: the stream's error comes at Recv.
//
//circuitgen:guard circuit=watch codes=Unavailable
type WatchClient interface {
	Watch(ctx context.Context, in *Request, opts ...grpc.CallOption) (grpc.ServerStreamingClient[Event], error)
}

// Events is an SDK's stream: Recv until io.EOF, Close to drop it.
type Events interface {
	Recv() (*Event, error)
	Close() error
}

// Feed returns SDK streams.
//
//circuitgen:guard circuit=feed errors=context.DeadlineExceeded
type Feed interface {
	Subscribe(ctx context.Context, topic string) (Events, error)
	// Tail takes no context: nothing but its stream's end settles it.
	Tail(topic string) (Events, error)
}
