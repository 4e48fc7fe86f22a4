package notify_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/circuitgen/circuitgen/examples/billing"
	"github.com/circuitgen/circuitgen/examples/billing/mailsdk"
	"github.com/circuitgen/circuitgen/examples/billing/notify"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// provider is the mail provider behind the SDK interface: it answers with
// err and counts the calls that reach it.
type provider struct {
	err   error
	calls atomic.Int64
}

func (p *provider) Send(context.Context, mailsdk.Message) (*mailsdk.Receipt, error) {
	p.calls.Add(1)
	if p.err != nil {
		return nil, p.err
	}
	return &mailsdk.Receipt{ID: "msg_1"}, nil
}

func (p *provider) Quota(context.Context) (int, error) { p.calls.Add(1); return 100, p.err }

func (p *provider) Close() error { return nil }

func guarded(t *testing.T) (*notify.GuardedSender, *provider, *circuit.Breaker) {
	t.Helper()
	store, err := filestore.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(store)
	p := &provider{}
	return notify.NewGuardedSender(p, b), p, b
}

var receipt = &billing.Receipt{ID: "ch_1", Amount: billing.Money{Amount: 1999, Currency: "EUR"}}

func TestProviderErrorsOpenTheMailCircuit(t *testing.T) {
	s, p, b := guarded(t)
	ctx := context.Background()
	p.err = &mailsdk.APIError{Code: 503, Message: "unavailable"}
	for i := range 5 { // the manifest's default threshold
		if err := notify.SendReceipt(ctx, s, "a@example.com", receipt); !errors.As(err, new(*mailsdk.APIError)) {
			t.Fatalf("send %d: %v, want the provider's APIError", i+1, err)
		}
	}
	err := notify.SendReceipt(ctx, s, "a@example.com", receipt)
	var open *circuit.OpenError
	if !errors.As(err, &open) || open.Name != "mail-api" {
		t.Fatalf("after 5 failures: %v, want an OpenError for mail-api", err)
	}
	if p.calls.Load() != 5 {
		t.Fatalf("provider called %d times, want 5: an open circuit must not call it", p.calls.Load())
	}
	// Quota has a circuit of its own: still closed.
	p.err = nil
	if _, err := s.Quota(ctx); err != nil {
		t.Fatalf("Quota: %v", err)
	}
	snap, err := b.Snapshot(ctx, "mail-api")
	if err != nil || snap.State != circuit.StateOpen {
		t.Fatalf("mail-api snapshot = %+v, %v; want open", snap, err)
	}
}

func TestCallersMistakesCountNothing(t *testing.T) {
	s, p, b := guarded(t)
	ctx := context.Background()
	p.err = mailsdk.ErrInvalidAddress
	for range 10 {
		if err := notify.SendReceipt(ctx, s, "not-an-address", receipt); !errors.Is(err, mailsdk.ErrInvalidAddress) {
			t.Fatalf("got %v, want ErrInvalidAddress unchanged", err)
		}
	}
	snap, err := b.Snapshot(ctx, "mail-api")
	if err != nil || snap.State != circuit.StateClosed || snap.Failures != 0 {
		t.Fatalf("snapshot = %+v, %v; want closed with no failures", snap, err)
	}
}
