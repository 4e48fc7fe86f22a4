// Package billing is a realistic client of a billing HTTP API, guarded by
// circuitgen: BillingAPI is annotated with //circuitgen: directives, Client
// is its net/http implementation, and GuardedBillingAPI (generated) runs
// every call through a shared circuit breaker, one circuit per failure
// domain. A ReceiptCache is its fallback: while the charge circuit is
// open, receipt lookups are answered from it.
package billing

import (
	"context"
	"net/http"
	"time"
)

//go:generate go tool circuitgen

// BillingAPI is the billing provider's API as the application uses it.
//
// No method falls back but Receipt: the others write, or need the
// provider's answer.
//
//circuitgen:guard wrapper=GuardedBillingAPI threshold=3 cooldown=5s lease=2s errors=*ConnectionError,context.DeadlineExceeded statuses=500-599 fallback=never
type BillingAPI interface {
	// Health asks the provider whether it is up; the raw response is
	// returned, and a 502-504 counts as a failure of the circuit.
	//
	//circuitgen:circuit billing-api:health errors=*ConnectionError,context.DeadlineExceeded statuses=502-504
	Health(ctx context.Context) (*http.Response, error)

	// Charge charges a customer.
	//
	//circuitgen:circuit billing-api:charge
	Charge(ctx context.Context, req ChargeRequest) (*Receipt, error)

	// Receipt looks a charge's receipt up. It shares the charge circuit
	// (the provider's /v1/charges endpoint); while that circuit rejects
	// calls, the fallback (a ReceiptCache: WithBillingAPIFallback) answers
	// with the receipt it remembered, marked Cached.
	//
	//circuitgen:circuit billing-api:charge fallback=rejected
	Receipt(ctx context.Context, id string) (*Receipt, error)

	// Refund refunds part or all of a charge. Refunds have their own
	// circuit: a failing refund endpoint must not block charges. Besides
	// five failures in a row, half of the refunds of the last minute failing
	// (once twenty have completed) opens it: a flaky endpoint rarely fails
	// five times running.
	//
	//circuitgen:circuit billing-api:refund threshold=5 rate=50% min_calls=20 window=1m
	Refund(ctx context.Context, receiptID string, amount Money) (*Receipt, error)

	// Invoices lists a customer's invoices.
	//
	//circuitgen:circuit billing-api:invoices
	Invoices(ctx context.Context, customerID string, opts ...ListOption) ([]Invoice, error)

	// Close releases the client's idle connections.
	//
	//circuitgen:skip
	Close() error
}

// Money is an amount in a currency's minor unit (cents).
type Money struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// ChargeRequest is what Charge sends.
type ChargeRequest struct {
	CustomerID     string `json:"customer_id"`
	Amount         Money  `json:"amount"`
	IdempotencyKey string `json:"idempotency_key"`
}

// Receipt is a completed charge or refund.
type Receipt struct {
	ID         string    `json:"id"`
	CustomerID string    `json:"customer_id"`
	Amount     Money     `json:"amount"`
	CreatedAt  time.Time `json:"created_at"`
	// Cached marks a receipt a ReceiptCache answered, not the provider:
	// how a caller tells the answer came from the fallback.
	Cached bool `json:"-"`
}

// Invoice is one of a customer's invoices.
type Invoice struct {
	ID     string `json:"id"`
	Amount Money  `json:"amount"`
	Paid   bool   `json:"paid"`
}

// ListOption narrows an invoice listing.
type ListOption func(*listQuery)

type listQuery struct {
	limit    int
	unpaid   bool
	startID  string
	hasLimit bool
}

// Limit returns at most n invoices.
func Limit(n int) ListOption { return func(q *listQuery) { q.limit, q.hasLimit = n, true } }

// UnpaidOnly lists only unpaid invoices.
func UnpaidOnly() ListOption { return func(q *listQuery) { q.unpaid = true } }

// After lists invoices after the one with the given id.
func After(id string) ListOption { return func(q *listQuery) { q.startID = id } }
