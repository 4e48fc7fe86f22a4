package unimported

import "context"

// API names errors of packages its file does not import.
//
//circuitgen:guard circuit=api errors=*net.OpError,io.EOF,*net/url.Error
type API interface {
	Get(ctx context.Context) error
}
