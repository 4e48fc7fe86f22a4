// Package mailsdk stands for a mail provider's Go SDK: code the application
// imports but does not own, so its interface cannot carry //circuitgen:
// directives. Package notify guards it through a circuitgen.yaml manifest.
package mailsdk

import (
	"context"
	"errors"
	"fmt"
)

// Message is one e-mail.
type Message struct {
	To, Subject, Body string
}

// Receipt is the provider's acknowledgement of a sent message.
type Receipt struct {
	ID string
}

// Sender sends e-mail through the provider.
type Sender interface {
	// Send sends msg.
	Send(ctx context.Context, msg Message) (*Receipt, error)
	// Quota reports how many messages may still be sent today.
	Quota(ctx context.Context) (int, error)
	// Close releases the SDK's connections.
	Close() error
}

// ErrInvalidAddress is returned for a malformed recipient: the caller's
// mistake, not the provider's.
var ErrInvalidAddress = errors.New("mailsdk: invalid address")

// APIError is an error answer of the provider's API.
type APIError struct {
	Code    int
	Message string
}

// Error describes the answer.
func (e *APIError) Error() string { return fmt.Sprintf("mailsdk: %d %s", e.Code, e.Message) }

// HTTPStatusCode returns the answer's HTTP status.
func (e *APIError) HTTPStatusCode() int { return e.Code }
