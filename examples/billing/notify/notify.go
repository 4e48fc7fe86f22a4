// Package notify e-mails receipts to customers through the mail provider's
// SDK, guarded by GuardedSender: a wrapper generated from circuitgen.yaml,
// since the SDK's interface belongs to another module and cannot be
// annotated.
package notify

//go:generate go tool circuitgen -manifest circuitgen.yaml

import (
	"context"
	"fmt"

	"github.com/circuitgen/circuitgen/examples/billing"
	"github.com/circuitgen/circuitgen/examples/billing/mailsdk"
)

// SendReceipt e-mails the receipt of a charge to its customer.
func SendReceipt(ctx context.Context, s mailsdk.Sender, to string, r *billing.Receipt) error {
	_, err := s.Send(ctx, mailsdk.Message{
		To:      to,
		Subject: "Your receipt " + r.ID,
		Body:    fmt.Sprintf("We charged %d.%02d %s.", r.Amount.Amount/100, r.Amount.Amount%100, r.Amount.Currency),
	})
	if err != nil {
		return fmt.Errorf("send receipt %s: %w", r.ID, err)
	}
	return nil
}
