package errclassifier

import (
	"context"
	"net/http"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// API names classifiers that do not fit.
//
//circuitgen:guard circuit=api
type API interface {
	//circuitgen:circuit api classifier=wrongResult
	Get(ctx context.Context) (*http.Response, error)
	//circuitgen:circuit api classifier=notAFunc
	Put(ctx context.Context) error
	//circuitgen:circuit api classifier=noOutcome
	Del(ctx context.Context) error
	//circuitgen:circuit api classifier=classify errors=context.Canceled
	Head(ctx context.Context) error
	//circuitgen:circuit api codes=NotACode
	Patch(ctx context.Context) error
}

var notAFunc = 1

func wrongResult(resp *http.Request, err error) circuit.Outcome { return circuit.Success }

func noOutcome(err error) bool { return false }

func classify(err error) circuit.Outcome { return circuit.Success }
