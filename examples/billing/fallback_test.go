package billing_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/examples/billing"
	"github.com/circuitgen/circuitgen/examples/billing/billingserver"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// rejections, a CallObserver, must hear rejections.
var _ circuit.Observer = (*rejections)(nil)

// rejections is a CallObserver that records the rejections it hears.
type rejections struct {
	mu   sync.Mutex
	seen []string
}

func (r *rejections) ObserveTransition(circuit.Transition)                                   {}
func (r *rejections) ObserveTransitionContext(context.Context, circuit.Transition)           {}
func (r *rejections) ObserveOutcome(context.Context, string, circuit.Outcome, time.Duration) {}
func (r *rejections) ObserveRejection(_ context.Context, e *circuit.OpenError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, e.Name)
}

// causeRecorder is the receipt cache, recording why it was called.
type causeRecorder struct {
	*billing.ReceiptCache
	cause error
	ok    bool
}

func (c *causeRecorder) Receipt(ctx context.Context, id string) (*billing.Receipt, error) {
	c.cause, c.ok = circuit.FromFallback(ctx)
	return c.ReceiptCache.Receipt(ctx, id)
}

// TestReceiptFallback runs the guarded client against a real provider
// over the file store: while the charge circuit is closed, Receipt comes
// from the provider; once the provider's failures open it, Receipt is
// answered by the receipt cache (marked Cached, its context carrying the
// *circuit.OpenError), the provider is not called, and the observer still
// hears the rejection; Charge, fallback=never, is rejected as before.
func TestReceiptFallback(t *testing.T) {
	srv, err := billingserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	store, err := filestore.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	obs := &rejections{}
	b := circuit.New(store, circuit.WithObserver(obs))
	cache := &causeRecorder{ReceiptCache: billing.NewReceiptCache()}
	api := billing.NewGuardedBillingAPI(billing.NewClient(srv.URL, nil), b, billing.WithBillingAPIFallback(cache))
	ctx := context.Background()

	receipt, err := api.Charge(ctx, billing.ChargeRequest{CustomerID: "cus_1", Amount: billing.Money{Amount: 500, Currency: "EUR"}})
	if err != nil {
		t.Fatal(err)
	}
	cache.Remember(receipt)
	got, err := api.Receipt(ctx, receipt.ID)
	if err != nil || got.Cached || got.CustomerID != "cus_1" || cache.ok {
		t.Fatalf("Receipt with the circuit closed = %+v, %v (fallback called: %v); want the provider's", got, err, cache.ok)
	}

	srv.SetMode(billingserver.Failing)
	for range 3 {
		if _, err := api.Receipt(ctx, receipt.ID); err == nil {
			t.Fatal("Receipt from a failing provider succeeded")
		}
	}
	if cache.ok {
		t.Fatal("a failure that did not open the circuit was answered by the fallback (fallback=rejected)")
	}
	hits := srv.Hits()
	got, err = api.Receipt(ctx, receipt.ID)
	if err != nil || !got.Cached || got.ID != receipt.ID {
		t.Fatalf("Receipt on the open circuit = %+v, %v; want the cached receipt", got, err)
	}
	var open *circuit.OpenError
	if !cache.ok || !errors.As(cache.cause, &open) || open.Name != "billing-api:charge" {
		t.Fatalf("the fallback's context: cause %v, marked %v; want the *circuit.OpenError of billing-api:charge", cache.cause, cache.ok)
	}
	if _, err := api.Receipt(ctx, "ch_9999"); !errors.Is(err, billing.ErrNotCached) {
		t.Fatalf("Receipt of an unknown charge on the open circuit: %v, want the cache's ErrNotCached", err)
	}
	if _, err := api.Charge(ctx, billing.ChargeRequest{CustomerID: "cus_2"}); !errors.As(err, &open) {
		t.Fatalf("Charge on the open circuit: %v, want the *circuit.OpenError (fallback=never)", err)
	}
	if srv.Hits() != hits {
		t.Errorf("the provider was called %d times while the circuit was open", srv.Hits()-hits)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.seen) != 3 {
		t.Errorf("the observer heard %d rejections (%v), want 3: a fallback's answer is still a rejection", len(obs.seen), obs.seen)
	}
}
