// Package sdk is an HTTP SDK whose only error is unexported: its status
// field cannot be read from another package.
package sdk

// Object is a stored object.
type Object struct{ Body []byte }

type responseError struct{ StatusCode int }

func (e *responseError) Error() string { return "response error" }

// Get returns an object or a *responseError.
func Get(key string) (*Object, error) { return nil, &responseError{StatusCode: 503} }
