package errconcreteerror

import "context"

// APIError is the provider's error.
type APIError struct{ Code int }

func (e *APIError) Error() string { return "api error" }

// TempError is an error interface of more than error.
type TempError interface {
	error
	Temporary() bool
}

// Failure is error by another name, which a *circuit.OpenError is.
type Failure error

// API returns its errors as types of its own, which no rejection can be
// returned as.
//
//circuitgen:guard circuit=api errors=*APIError
type API interface {
	Get(ctx context.Context, id string) (int, *APIError)
	Put(ctx context.Context, id string) TempError
	Del(ctx context.Context, id string) Failure
}
