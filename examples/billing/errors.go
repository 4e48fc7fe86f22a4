package billing

import (
	"errors"
	"fmt"
)

// ErrDeclined is returned by Charge when the provider declines the card.
// It is the customer's problem, not the provider's: the circuit ignores it.
var ErrDeclined = errors.New("billing: card declined")

// ConnectionError reports that the provider could not be reached: the
// connection was refused, reset or timed out before a response.
type ConnectionError struct {
	Op  string
	Err error
}

// Error describes the failure.
func (e *ConnectionError) Error() string {
	return fmt.Sprintf("billing: %s: connection: %v", e.Op, e.Err)
}

// Unwrap returns the transport's error.
func (e *ConnectionError) Unwrap() error { return e.Err }

// StatusError reports an unexpected HTTP status from the provider.
type StatusError struct {
	Op     string
	Status int
	Body   string
}

// Error describes the failure.
func (e *StatusError) Error() string {
	return fmt.Sprintf("billing: %s: HTTP %d: %s", e.Op, e.Status, e.Body)
}

// StatusCode returns the HTTP status, so that circuit classifiers see it.
func (e *StatusError) StatusCode() int { return e.Status }
