package api

import "context"

// Result reports its error but has no SetErr, and its package no
// func(error) Result to make one.
type Result struct{ err error }

// Err returns the result's error.
func (r Result) Err() error { return r.err }

// NewResult takes no error: it is no constructor from one.
func NewResult() Result { return Result{} }

// Reply reports its error with Error() error, and its package has no
// constructor either.
type Reply struct{ err error }

// Error returns the reply's error.
func (r *Reply) Error() error { return r.err }

// Tied reports its error, and two constructors of one parameter make one.
type Tied struct{ err error }

// Err returns the error.
func (t Tied) Err() error { return t.err }

// TiedFrom makes a Tied from err.
func TiedFrom(err error) Tied { return Tied{err} }

// TiedOf makes a Tied from err too.
func TiedOf(err error) Tied { return Tied{err} }

// API is a client returning such results.
//
//circuitgen:guard circuit=api errors=context.DeadlineExceeded
type API interface {
	Get(ctx context.Context, key string) Result
	Send(ctx context.Context) *Reply
	Both(ctx context.Context) Tied
}

// Row is a driver's own row: Err and Scan report the query's error, and
// its package has no constructor from an error.
type Row struct{ err error }

// Err returns the row's error.
func (r *Row) Err() error { return r.err }

// Scan copies the row into dest, or returns its error.
func (r *Row) Scan(dest ...any) error { return r.err }

// Line is a row whose error surfaces only at Scan.
type Line struct{ err error }

// Scan copies the line into dest, or returns its error.
func (l *Line) Scan(dest ...any) error { return l.err }

// Driver returns its own concrete rows.
//
//circuitgen:guard circuit=driver errors=context.DeadlineExceeded
type Driver interface {
	QueryRow(ctx context.Context, query string) *Row
	QueryLine(ctx context.Context, query string) *Line
}
