package seq

import (
	"context"
	"errors"
	"iter"
)

// ErrUnavailable is the store's outage.
var ErrUnavailable = errors.New("store: unavailable")

// Item is one stored item.
type Item struct{ Key string }

// Store lists items as a fallible stream.
//
//circuitgen:guard circuit=store errors=ErrUnavailable
type Store interface {
	// Items streams the items under prefix; the first error ends it.
	Items(ctx context.Context, prefix string) iter.Seq2[Item, error]
	// Watch counts a caller's cancellation as a failure: it selects
	// context.Canceled.
	//circuitgen:circuit store:watch errors=ErrUnavailable,context.Canceled
	Watch(ctx context.Context) iter.Seq2[Item, error]
	// Keys cannot fail: it passes through.
	Keys(ctx context.Context) iter.Seq[string]
}
