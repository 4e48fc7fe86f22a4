package returned

import (
	"context"
	"errors"
)

// ErrNoResponders is the server's outage.
var ErrNoResponders = errors.New("no responders")

// JetStream opens streams and key-value buckets, which the same run
// guards: they come back guarded, on the same Breaker.
//
//circuitgen:guard circuit=js errors=ErrNoResponders
type JetStream interface {
	Stream(ctx context.Context, name string) (Stream, error)
	KeyValue(ctx context.Context, bucket string) (KeyValue, error)
	//circuitgen:circuit js guard_returned=false
	RawStream(ctx context.Context, name string) (Stream, error)
}

// Stream is one stream.
//
//circuitgen:guard circuit=js-stream errors=ErrNoResponders
type Stream interface {
	Info(ctx context.Context) (string, error)
	// Mirror returns the stream itself, guarded.
	Mirror(ctx context.Context) (Stream, error)
}

// KeyValue is one bucket.
//
//circuitgen:guard circuit=js-kv errors=ErrNoResponders
type KeyValue interface {
	Get(ctx context.Context, key string) ([]byte, error)
}
