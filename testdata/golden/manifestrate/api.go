// Package manifestrate has a manifest whose rates are YAML integers and
// floats as well as strings.
package manifestrate

import "context"

// API is listed in the manifest.
type API interface {
	Get(ctx context.Context) error
	Put(ctx context.Context) error
	Del(ctx context.Context) error
}
