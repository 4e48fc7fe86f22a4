// Package errdefaults has a manifest whose invalid defaults every method
// overrides: values bad whatever the other levels give are reported all the
// same.
package errdefaults

import "context"

// API is listed in the manifest.
type API interface {
	Get(ctx context.Context) error
}
