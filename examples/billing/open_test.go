package billing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/examples/billing"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// What the application does while the provider's charge circuit is open:
// a unit test with no provider, no state directory and no waiting. A charge
// is refused without a call (the client here is never reached); a receipt
// lookup is answered by the fallback, marked Cached.
func Example_openCircuit() {
	kit := circuittest.New()
	cache := billing.NewReceiptCache()
	cache.Remember(&billing.Receipt{ID: "rcpt_1", Amount: billing.Money{Amount: 1200, Currency: "EUR"}})
	api := billing.NewGuardedBillingAPI(billing.NewClient("http://127.0.0.1:1", nil), kit.Breaker, billing.WithBillingAPIFallback(cache))

	kit.Open("billing-api:charge", time.Minute)
	_, err := api.Charge(context.Background(), billing.ChargeRequest{CustomerID: "cus_1"})
	var open *circuit.OpenError
	fmt.Println("charge refused:", errors.As(err, &open), open.RetryAfter())
	r, err := api.Receipt(context.Background(), "rcpt_1")
	fmt.Println("receipt:", r.ID, r.Cached, err)
	// Output:
	// charge refused: true 1m0s
	// receipt: rcpt_1 true <nil>
}

// fakeProvider is a BillingAPI whose every call fails the test: under an
// open circuit none must reach it.
type fakeProvider struct {
	billing.BillingAPI
	t *testing.T
}

func (f fakeProvider) Charge(context.Context, billing.ChargeRequest) (*billing.Receipt, error) {
	f.t.Error("the provider was called through an open circuit")
	return nil, nil
}

// TestChargeWhileBillingIsOpen is the README's test of the open-circuit
// path: a charge is refused without a call, and once the cooldown is over
// the circuit is ready to probe.
func TestChargeWhileBillingIsOpen(t *testing.T) {
	kit := circuittest.New()
	api := billing.NewGuardedBillingAPI(fakeProvider{t: t}, kit.Breaker, billing.WithBillingAPIFallback(billing.NewReceiptCache()))

	kit.Open("billing-api:charge", time.Minute)
	_, err := api.Charge(context.Background(), billing.ChargeRequest{CustomerID: "cus_1"})
	if _, ok := errors.AsType[*circuit.OpenError](err); !ok {
		t.Fatalf("Charge = %v, want an OpenError", err)
	}
	kit.Advance(time.Minute)
	kit.RequireState(t, "billing-api:charge", circuit.StateHalfOpen)
}
