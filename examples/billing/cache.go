package billing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// ErrNotCached is returned by a ReceiptCache for a receipt it does not
// hold.
var ErrNotCached = errors.New("billing: receipt not cached")

// errCacheOnly is returned by the methods a ReceiptCache cannot answer.
var errCacheOnly = errors.New("billing: the receipt cache answers only receipt lookups")

// ReceiptCache remembers receipts and answers Receipt from them: the
// fallback of a GuardedBillingAPI (WithBillingAPIFallback), which calls it
// when the charge circuit rejects a lookup. The receipts it returns are
// copies marked Cached. Its other methods return an error: no method but
// Receipt falls back.
type ReceiptCache struct {
	mu       sync.Mutex
	receipts map[string]Receipt
}

// NewReceiptCache returns an empty cache.
func NewReceiptCache() *ReceiptCache { return &ReceiptCache{receipts: map[string]Receipt{}} }

// Remember stores r, to answer lookups of r.ID.
func (c *ReceiptCache) Remember(r *Receipt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.receipts[r.ID] = *r
}

// Receipt returns the remembered receipt id, marked Cached, or
// ErrNotCached.
func (c *ReceiptCache) Receipt(_ context.Context, id string) (*Receipt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.receipts[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotCached, id)
	}
	r.Cached = true
	return &r, nil
}

// Health returns an error: the cache is no provider.
func (c *ReceiptCache) Health(context.Context) (*http.Response, error) { return nil, errCacheOnly }

// Charge returns an error: a charge is never answered from a cache.
func (c *ReceiptCache) Charge(context.Context, ChargeRequest) (*Receipt, error) {
	return nil, errCacheOnly
}

// Refund returns an error: a refund is never answered from a cache.
func (c *ReceiptCache) Refund(context.Context, string, Money) (*Receipt, error) {
	return nil, errCacheOnly
}

// Invoices returns an error.
func (c *ReceiptCache) Invoices(context.Context, string, ...ListOption) ([]Invoice, error) {
	return nil, errCacheOnly
}

// Close does nothing.
func (c *ReceiptCache) Close() error { return nil }

var _ BillingAPI = (*ReceiptCache)(nil)
