package fallback

import (
	"context"
	"errors"
	"net/http"
)

// ErrDown is the provider's outage.
var ErrDown = errors.New("billing: down")

// Receipt is a charge's receipt.
type Receipt struct {
	ID string
	// Cached marks a receipt a fallback answered from its cache.
	Cached bool
}

// Cmd is a command that carries its own error, as go-redis's do.
type Cmd struct{ err error }

// Err returns the command's error.
func (c *Cmd) Err() error { return c.err }

// SetErr sets the command's error.
func (c *Cmd) SetErr(err error) { c.err = err }

// Fetches report their error with Err.
type Fetches []struct{ Err error }

// Err returns the first error.
func (fs Fetches) Err() error {
	for _, f := range fs {
		if f.Err != nil {
			return f.Err
		}
	}
	return nil
}

// BillingAPI looks receipts up, charges, and takes a fallback per method:
// on a rejection (the default), also on a failure, or never.
//
//circuitgen:guard circuit=billing errors=ErrDown
type BillingAPI interface {
	// Receipt falls back on a rejection, the default.
	Receipt(ctx context.Context, id string) (*Receipt, error)
	// Lookup falls back on a failure too.
	//circuitgen:circuit billing fallback=failed
	Lookup(ctx context.Context, id string) (*Receipt, error)
	// Charge never falls back: a write.
	//circuitgen:circuit billing fallback=never
	Charge(ctx context.Context, cents int64) (*Receipt, error)
	// Ping returns only an error.
	//circuitgen:circuit billing fallback=failed
	Ping(ctx context.Context) error
	// Get carries its error.
	//circuitgen:circuit billing fallback=failed
	Get(ctx context.Context, key string) *Cmd
	// Poll reports its error with Err.
	//circuitgen:circuit billing fallback=failed
	Poll(ctx context.Context) Fetches
	// Do takes a request: the fallback's request carries the marked
	// context.
	Do(req *http.Request) (*http.Response, error)
	// Sync takes no context.
	Sync(ids ...string) error
}
