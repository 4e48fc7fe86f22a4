package basic

import (
	"context"
	"net/http"
)

// HTTPConnectionError is a failed connection to the billing API.
type HTTPConnectionError struct{ Err error }

func (e *HTTPConnectionError) Error() string { return "billing: connection: " + e.Err.Error() }

// ChargeRequest is a charge.
type ChargeRequest struct{ Cents int64 }

// Receipt is a completed charge.
type Receipt struct{ ID string }

// BillingAPI is the billing service's client.
//
//circuitgen:guard threshold=3 cooldown=30s lease=10s
type BillingAPI interface {
	//circuitgen:circuit billing-api errors=*HTTPConnectionError,context.DeadlineExceeded statuses=502-504
	Status(ctx context.Context) (*http.Response, error)
	//circuitgen:circuit billing-api:charge threshold=5 errors=*HTTPConnectionError statuses=500-599,429
	Charge(ctx context.Context, req ChargeRequest) (*Receipt, error)
	//circuitgen:skip
	Close() error
}
