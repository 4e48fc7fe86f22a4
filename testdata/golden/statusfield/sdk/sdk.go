// Package sdk is an HTTP SDK whose error holds its status in a field, as
// Stripe's stripe.Error does.
package sdk

// Object is a stored object.
type Object struct{ Body []byte }

// ResponseError is a failed response: its status is a field, with no
// method to read it.
type ResponseError struct {
	HTTPStatusCode int
	Message        string
}

func (e *ResponseError) Error() string { return e.Message }

// Throttled has a StatusCode() method: circuit.ErrorStatus reads it.
type Throttled struct{ Status int }

func (e *Throttled) Error() string { return "throttled" }

// StatusCode returns the response's status.
func (e *Throttled) StatusCode() int { return e.Status }

// NotFound names a code that is not a status: its Code is a string.
type NotFound struct{ Code string }

func (e NotFound) Error() string { return e.Code }
