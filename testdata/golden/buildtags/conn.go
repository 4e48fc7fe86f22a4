package buildtags

import (
	"context"
	"errors"
)

// ErrClosed is a closed connection.
var ErrClosed = errors.New("conn: closed")

// Conn is a connection whose method set depends on the platform: the
// methods of platform come from a file with a build constraint.
//
//circuitgen:guard circuit=conn errors=ErrClosed
type Conn interface {
	Send(ctx context.Context, msg []byte) error
	platform
}
