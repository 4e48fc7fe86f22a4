// Package notours has a hand-written guarded_gen.go where circuitgen would
// write its output: circuitgen must refuse to overwrite it.
package notours

import "context"

//circuitgen:guard circuit=api statuses=503
type API interface {
	Get(ctx context.Context, id string) error
}
