package codes

import (
	"context"

	"google.golang.org/grpc"
)

// Request and Reply are messages.
type (
	Request struct{ ID string }
	Reply   struct{ Body string }
)

// Client is shaped like a generated gRPC client: its failures are status
// codes, read from the error chain.
//
//circuitgen:guard circuit=rpc codes=Unavailable,DeadlineExceeded,ResourceExhausted
type Client interface {
	Get(ctx context.Context, in *Request, opts ...grpc.CallOption) (*Reply, error)
	//circuitgen:circuit rpc-put codes=Unavailable errors=context.DeadlineExceeded
	Put(ctx context.Context, in *Request, opts ...grpc.CallOption) (*Reply, error)
}
