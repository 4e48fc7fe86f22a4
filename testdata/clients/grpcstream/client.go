// Package grpcstream guards a gRPC client's server-streaming call, written
// as protoc-gen-go-grpc writes one: the stream's error comes at Recv, not
// when it opens, so Recv settles the call. A stream read to io.EOF is a
// success; one dropped by CloseSend or its context's cancellation, Ignored.
package grpcstream

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

//go:generate go tool circuitgen

// WatchClient is the client of the Watcher service, its one method
// server-streaming.
//
//circuitgen:guard circuit=watch threshold=3 cooldown=1m codes=Unavailable,DeadlineExceeded
type WatchClient interface {
	// Watch streams the values of a key.
	Watch(ctx context.Context, in *wrapperspb.StringValue, opts ...grpc.CallOption) (grpc.ServerStreamingClient[wrapperspb.StringValue], error)
}

// WatchServer is the server side of the Watcher service.
type WatchServer interface {
	Watch(in *wrapperspb.StringValue, stream grpc.ServerStreamingServer[wrapperspb.StringValue]) error
}

// WatcherServiceDesc describes the Watcher service, as protoc-gen-go-grpc
// would, without a .proto: its messages are protobuf's well-known
// StringValue.
var WatcherServiceDesc = grpc.ServiceDesc{
	ServiceName: "circuitgen.test.Watcher",
	HandlerType: (*WatchServer)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName:    "Watch",
		Handler:       watchHandler,
		ServerStreams: true,
	}},
	Metadata: "watcher.proto",
}

func watchHandler(srv any, stream grpc.ServerStream) error {
	in := new(wrapperspb.StringValue)
	if err := stream.RecvMsg(in); err != nil {
		return err
	}
	return srv.(WatchServer).Watch(in, &grpc.GenericServerStream[wrapperspb.StringValue, wrapperspb.StringValue]{ServerStream: stream})
}

// NewWatchClient returns the Watcher client of cc.
func NewWatchClient(cc grpc.ClientConnInterface) WatchClient { return watchClient{cc} }

type watchClient struct{ cc grpc.ClientConnInterface }

func (c watchClient) Watch(ctx context.Context, in *wrapperspb.StringValue, opts ...grpc.CallOption) (grpc.ServerStreamingClient[wrapperspb.StringValue], error) {
	stream, err := c.cc.NewStream(ctx, &WatcherServiceDesc.Streams[0], "/circuitgen.test.Watcher/Watch", opts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[wrapperspb.StringValue, wrapperspb.StringValue]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}
