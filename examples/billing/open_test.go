package billing_test

import (
	"context"
	"errors"
	"fmt"
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
