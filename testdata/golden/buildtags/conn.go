package buildtags

import (
	"context"
	"errors"

	"github.com/circuitgen/circuitgen/testdata/golden/buildtags/netplat"
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

// Link embeds an interface of another package whose methods depend on the
// platform.
//
//circuitgen:guard circuit=link errors=ErrClosed
type Link interface {
	netplat.Dialer
	Close() error
}
