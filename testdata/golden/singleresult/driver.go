package singleresult

import (
	"context"
	"errors"
)

// ErrDown is the server's outage.
var ErrDown = errors.New("server down")

// Registry is the driver's codec registry.
type Registry struct{}

// SingleResult is a driver's own single result, as mongo's: a concrete
// type whose Err and Decode report the query's error. It has no SetErr.
type SingleResult struct {
	doc any
	err error
}

// Err returns the query's error.
func (r *SingleResult) Err() error { return r.err }

// Decode decodes the document into v, or returns the query's error.
func (r *SingleResult) Decode(v any) error { return r.err }

// NewSingleResultFromDocument makes a result of doc and err, as mongo's:
// a nil doc is refused.
func NewSingleResultFromDocument(doc any, err error, reg *Registry) *SingleResult {
	if doc == nil {
		return &SingleResult{err: errors.New("document is nil")}
	}
	return &SingleResult{doc: doc, err: err}
}

// Collection finds single documents.
//
//circuitgen:guard circuit=docs errors=ErrDown
type Collection interface {
	FindOne(ctx context.Context, filter any) *SingleResult
}
