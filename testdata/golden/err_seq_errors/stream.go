package errseqerrors

import (
	"context"
	"iter"
)

// APIError is the provider's error.
type APIError struct{ Code int }

func (e *APIError) Error() string { return "api error" }

// Event is one event.
type Event struct{}

// Stream has streams that can fail, but not with an error last: none
// passes straight through as a stream that cannot fail would.
//
//circuitgen:guard circuit=stream errors=*APIError
type Stream interface {
	// Typed fails with a concrete error type.
	Typed(ctx context.Context) iter.Seq2[Event, *APIError]
	// Errors yields errors.
	Errors(ctx context.Context) iter.Seq[error]
	// First puts the error first.
	First(ctx context.Context) iter.Seq2[error, Event]
	// Events cannot fail: it passes through.
	Events(ctx context.Context) iter.Seq2[string, Event]
}
