// Package netplat declares an interface whose methods depend on the
// platform, by its files' names and build constraints.
package netplat

import "context"

// Dialer dials on Linux.
type Dialer interface {
	DialNetlink(ctx context.Context, proto int) (uintptr, error)
}
