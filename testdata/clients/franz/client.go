// Package franz guards franz-go's Kafka client, a struct client whose
// ProduceSync and PollFetches report their errors in their results
// (kgo.ProduceResults' FirstErr, kgo.Fetches' Err) without a SetErr: a
// rejected call returns results carrying the *circuit.OpenError.
package franz

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

//go:generate go tool circuitgen

// Client is the part of *kgo.Client this package calls (written by
// circuitgen init -source github.com/twmb/franz-go/pkg/kgo.Client, then
// cut).
//
//circuitgen:guard circuit=kafka threshold=3 cooldown=1m errors=*net.OpError,context.DeadlineExceeded,kgo.ErrClientClosed
type Client interface {
	ProduceSync(ctx context.Context, rs ...*kgo.Record) kgo.ProduceResults
	PollFetches(ctx context.Context) kgo.Fetches
	Ping(ctx context.Context) error
	Close()
}

var _ Client = (*kgo.Client)(nil)
