//go:build windows

package buildtags

import "context"

// platform holds the methods a Conn has on Windows.
type platform interface {
	Handle(ctx context.Context) (uintptr, error)
}
