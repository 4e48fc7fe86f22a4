//go:build !linux

package netplat

import "context"

// Dialer dials elsewhere.
type Dialer interface {
	Dial(ctx context.Context, addr string) (uintptr, error)
}
