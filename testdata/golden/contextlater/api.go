package contextlater

import (
	"context"
	"net/http"
)

// TimeoutError is a timeout.
type TimeoutError struct{}

func (TimeoutError) Error() string { return "timeout" }

// API takes its contexts after other parameters.
//
//circuitgen:guard circuit=api errors=TimeoutError
type API interface {
	// Get takes its context second: the breaker uses it.
	Get(id string, ctx context.Context) (string, error)
	// Do takes a request, then a context: the context, not the request's,
	// bounds the call.
	Do(req *http.Request, ctx context.Context) (*http.Response, error)
}
