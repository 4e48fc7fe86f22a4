package carrierdoc

import (
	"context"
	"errors"
)

// Result is a driver's single result: it reports its error with Err() and
// has no SetErr.
type Result struct {
	doc string
	err error
}

// Err returns the result's error.
func (r *Result) Err() error { return r.err }

// Decode returns the result's document.
func (r *Result) Decode() (string, error) { return r.doc, r.err }

// NewResultFromDocument returns a result holding doc and err, as a
// driver's mongo.NewSingleResultFromDocument: a constructor from an error
// with another parameter beside it.
func NewResultFromDocument(doc string, err error) *Result {
	return &Result{doc: doc, err: err}
}

// NewResult returns a result holding doc: it takes no error, so it is no
// constructor from an error.
func NewResult(doc string) *Result { return &Result{doc: doc} }

// Cursor is a batch of documents that reports its error with Err().
type Cursor struct{ err error }

// Err returns the batch's error.
func (c Cursor) Err() error { return c.err }

// Options are a cursor's settings.
type Options struct{ Batch int }

// Option configures a cursor.
type Option func(*Options)

// NewCursor returns a cursor failing with err: every other parameter is
// given its zero value, and the variadic one nothing.
func NewCursor(batch int, o Options, err error, tags []string, opts ...Option) Cursor {
	return Cursor{err: err}
}

// ErrUnavailable is the store's outage.
var ErrUnavailable = errors.New("store unavailable")

// Store finds one document.
//
//circuitgen:guard circuit=store errors=ErrUnavailable
type Store interface {
	FindOne(ctx context.Context, filter string) *Result
	Find(ctx context.Context, filter string) Cursor
}
