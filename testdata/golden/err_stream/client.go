package errstream

import (
	"context"

	"google.golang.org/grpc"
)

// Request and Event are messages.
type (
	Request struct{ Key string }
	Event   struct{ Value string }
)

// Cursor is a stream of a concrete type.
type Cursor struct{}

// Recv returns the next event.
func (*Cursor) Recv() (*Event, error) { return nil, nil }

// Client has streams the wrapper cannot settle where their error
// surfaces: none is settled when it opens.
//
//circuitgen:guard circuit=rpc codes=Unavailable
type Client interface {
	// Upload is client-streaming.
	Upload(ctx context.Context, opts ...grpc.CallOption) (grpc.ClientStreamingClient[Event, Request], error)
	// Open is a stream of any direction, as grpc.ClientConnInterface's
	// NewStream returns.
	Open(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error)
	// Chat is bidi-streaming.
	Chat(ctx context.Context, opts ...grpc.CallOption) (grpc.BidiStreamingClient[Event, Event], error)
	// Tail returns a concrete stream.
	Tail(ctx context.Context, in *Request) (*Cursor, error)
	// Watch is server-streaming, but falls back on failures, which come
	// after it returned.
	//circuitgen:circuit rpc fallback=failed
	Watch(ctx context.Context, in *Request, opts ...grpc.CallOption) (grpc.ServerStreamingClient[Event], error)
}
