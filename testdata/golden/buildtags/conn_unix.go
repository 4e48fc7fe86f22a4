//go:build unix

package buildtags

import "context"

// platform holds the methods a Conn has on Unix.
type platform interface {
	Fd(ctx context.Context) (uintptr, error)
}
