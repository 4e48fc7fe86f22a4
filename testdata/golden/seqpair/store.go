package seqpair

import (
	"context"
	"errors"
	"iter"
)

// ErrUnavailable is the store's outage.
var ErrUnavailable = errors.New("store: unavailable")

// Item is one stored item.
type Item struct{ Key string }

// Store opens a listing, then streams it: an error at open comes with
// the iterator, a later one in it.
//
//circuitgen:guard circuit=store errors=ErrUnavailable
type Store interface {
	Items(ctx context.Context, prefix string) (iter.Seq2[Item, error], error)
}
