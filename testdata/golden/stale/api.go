package stale

import "context"

// API is guarded; a broken output of an earlier run lies beside it, and
// main.go uses the wrapper that is not generated yet.
//
//circuitgen:guard circuit=stale statuses=503
type API interface {
	Call(ctx context.Context) error
}
