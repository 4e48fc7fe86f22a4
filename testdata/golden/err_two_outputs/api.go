// Package errtwooutputs has a manifest whose output is not guarded_gen.go,
// which an earlier run without the manifest wrote: both would declare
// GuardedAPI.
package errtwooutputs

import "context"

// API is guarded by its directive.
//
//circuitgen:guard circuit=api statuses=503
type API interface {
	Get(ctx context.Context) error
}
