package billing_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/circuitgen/circuitgen/examples/billing"
	"github.com/circuitgen/circuitgen/examples/billing/billingserver"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// TestFlakyRefundsOpenByRate runs refunds against a real provider that
// fails every other request: never two failures in a row, so the
// consecutive rule (five) never opens the refund circuit, but the rate rule
// (half of at least twenty calls in a minute) does, and then the next refund
// is not sent.
func TestFlakyRefundsOpenByRate(t *testing.T) {
	srv, err := billingserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.SetMode(billingserver.Flaky)
	store, err := filestore.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(store)
	api := billing.NewGuardedBillingAPI(billing.NewClient(srv.URL, nil), b)
	ctx := context.Background()
	amount := billing.Money{Amount: 100, Currency: "EUR"}

	var failed int
	for i := 1; i <= 20; i++ {
		_, err := api.Refund(ctx, "ch_0001", amount)
		var open *circuit.OpenError
		if errors.As(err, &open) {
			t.Fatalf("refund %d rejected (%v) before 20 calls completed", i, err)
		}
		if err != nil {
			failed++
		}
	}
	if failed != 10 {
		t.Fatalf("%d of 20 refunds failed, want 10 (every other one)", failed)
	}
	snap, err := b.Snapshot(ctx, "billing-api:refund")
	if err != nil {
		t.Fatal(err)
	}
	if snap.State != circuit.StateOpen {
		t.Fatalf("after 10 failures in 20 refunds, none two in a row: %s with %d consecutive failures, want open", snap.State, snap.Failures)
	}
	hits := srv.Hits()
	_, err = api.Refund(ctx, "ch_0001", amount)
	var open *circuit.OpenError
	if !errors.As(err, &open) || open.Name != "billing-api:refund" {
		t.Fatalf("refund on the open circuit: %v, want *circuit.OpenError", err)
	}
	if srv.Hits() != hits {
		t.Fatal("the rejected refund reached the provider")
	}
	if _, err := api.Charge(ctx, billing.ChargeRequest{CustomerID: "cus_1", Amount: amount}); err != nil {
		var open *circuit.OpenError
		if errors.As(err, &open) {
			t.Fatalf("a charge was rejected by the refund circuit: %v", err)
		}
	}
}
