// Package transport is an SDK's HTTP layer: its error has
// HTTPStatusCode(), as smithy-go's transport/http ResponseError has.
package transport

// ResponseError is a failed response.
type ResponseError struct{ Status int }

func (e *ResponseError) Error() string { return "response error" }

// HTTPStatusCode returns the response's status.
func (e *ResponseError) HTTPStatusCode() int { return e.Status }

// Send fails with a *ResponseError.
func Send() error { return &ResponseError{Status: 503} }
