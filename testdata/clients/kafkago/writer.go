// Package kafkago guards segmentio/kafka-go's Writer, selecting the
// broker's error codes: kafka.Error is an int type whose constants
// errors.Is matches.
package kafkago

import (
	"context"

	"github.com/segmentio/kafka-go"
)

//go:generate go tool circuitgen

// Writer is the part of *kafka.Writer this package calls. A broker that
// closes the connection shows as *net.OpError or io.EOF, by timing.
//
//circuitgen:guard circuit=kafka-writer threshold=3 cooldown=1m errors=kafka.LeaderNotAvailable,kafka.NotLeaderForPartition,kafka.RequestTimedOut,*net.OpError,io.EOF,io.ErrUnexpectedEOF,context.DeadlineExceeded
type Writer interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
	//circuitgen:skip
	Stats() kafka.WriterStats
	Close() error
}

var _ Writer = (*kafka.Writer)(nil)
