package errconst

import "context"

// Error is a broker's error code, an int whose constants errors.Is
// matches, as kafka-go's kafka.Error is.
type Error int

// The codes.
const (
	LeaderNotAvailable Error = 5
	NotLeader          Error = 6
	UnknownTopic       Error = 3
)

func (e Error) Error() string { return "broker error" }

// Writer writes to a broker.
//
//circuitgen:guard circuit=broker errors=LeaderNotAvailable,NotLeader,context.DeadlineExceeded
type Writer interface {
	Write(ctx context.Context, msg []byte) error
}
