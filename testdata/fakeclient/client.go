// Package fakeclient is an annotated client whose generated guarded client
// the behaviour tests drive.
package fakeclient

//go:generate go tool circuitgen

import (
	"context"
	"iter"
	"net/http"
)

// ConnError is a failed connection.
type ConnError struct{ Addr string }

func (e *ConnError) Error() string { return "connect " + e.Addr + ": refused" }

// StatusError is an error that carries an HTTP status.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return http.StatusText(e.Code) }

// StatusCode returns the status.
func (e *StatusError) StatusCode() int { return e.Code }

// Client is a remote service.
//
//circuitgen:guard circuit=svc threshold=2 cooldown=1m errors=*ConnError,context.DeadlineExceeded statuses=502-504
type Client interface {
	// Get returns a response whose status counts.
	Get(ctx context.Context, path string) (*http.Response, error)
	// Post counts only connection errors.
	//circuitgen:circuit svc-post threshold=1 errors=*ConnError
	Post(ctx context.Context, body []byte) error
	// Call counts gRPC statuses, Unknown among them.
	//circuitgen:circuit svc-rpc threshold=1 codes=Unknown,Unavailable
	Call(ctx context.Context, method string) error
	// Fetch falls back on a counted status too, and takes its context
	// second.
	//circuitgen:circuit svc-fetch threshold=1 fallback=failed
	Fetch(path string, ctx context.Context) (*http.Response, error)
	//circuitgen:skip
	Name() string
}

// Lister opens a listing, then streams it: an error at open comes with
// the iterator, a later one in it.
//
//circuitgen:guard circuit=list threshold=1 cooldown=1m errors=*ConnError
type Lister interface {
	List(ctx context.Context) (iter.Seq2[int, error], error)
	// First returns the first item, whose Scan reports the call's error.
	First(ctx context.Context) Row
}

// Row is one item; its Scan reports the call's error.
type Row interface {
	Scan(dest ...any) error
}

// Doer sends requests, as *http.Client does; its fallback answers a 503
// too.
//
//circuitgen:guard circuit=doer statuses=503 fallback=failed
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
	// Send takes its context apart from the request's.
	Send(ctx context.Context, req *http.Request) (*http.Response, error)
}

// Batch is a generic builder: Add returns it, guarded; Send carries the
// error.
//
//circuitgen:guard circuit=batch threshold=5 cooldown=1m errors=*ConnError
type Batch[T any] interface {
	Add(v T) Batch[T]
	Send(ctx context.Context) error
}
