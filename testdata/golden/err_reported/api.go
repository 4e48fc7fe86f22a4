package api

import "context"

// Result reports its error but has no SetErr, and its package no
// func(error) Result to make one.
type Result struct{ err error }

// Err returns the result's error.
func (r Result) Err() error { return r.err }

// API is a client returning such results.
//
//circuitgen:guard circuit=api errors=context.DeadlineExceeded
type API interface {
	Get(ctx context.Context, key string) Result
}
