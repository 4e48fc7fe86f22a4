package classifier

import (
	"context"
	"errors"
	"net/http"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// ErrBusy is a failure.
var ErrBusy = errors.New("busy")

// API's methods are classified by functions of the package.
//
//circuitgen:guard circuit=api classifier=classify
type API interface {
	Put(ctx context.Context, body []byte) error
	//circuitgen:circuit api-get classifier=classifyResponse
	Get(ctx context.Context) (*http.Response, error)
}

func classify(err error) circuit.Outcome {
	if errors.Is(err, ErrBusy) {
		return circuit.Failure
	}
	if err != nil {
		return circuit.Ignored
	}
	return circuit.Success
}

func classifyResponse(resp *http.Response, err error) circuit.Outcome {
	if err != nil || resp.StatusCode >= 500 {
		return circuit.Failure
	}
	return circuit.Success
}
