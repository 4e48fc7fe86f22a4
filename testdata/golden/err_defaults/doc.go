// Package errdefaults has a manifest whose invalid defaults every method
// overrides: they are reported all the same.
package errdefaults

import "context"

// API is listed in the manifest.
type API interface {
	Get(ctx context.Context) error
}
