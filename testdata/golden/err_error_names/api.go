package errerrornames

import (
	"context"
	"io"
)

// NotAnError is a struct without an Error method.
type NotAnError struct{}

// PtrError implements error on its pointer only.
type PtrError struct{}

func (*PtrError) Error() string { return "ptr" }

// Count is not an error.
var Count = 3

// Check is a function.
func Check() error { return nil }

// Limit is a constant.
const Limit = 3

// API selects names that are not errors.
//
//circuitgen:guard circuit=api
type API interface {
	//circuitgen:circuit api errors=NoSuch,*NotAnError,PtrError,Count,Check,Limit,*io.EOF,*io.Reader,nosuchpkg.Err,io.NoSuch,*io.Writer
	Get(ctx context.Context) error
	//circuitgen:circuit api errors=io.Reader,*net/http.Handler,*io/fs.nope,a.b-c
	Put(ctx context.Context) error
}
