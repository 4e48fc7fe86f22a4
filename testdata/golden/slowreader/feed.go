package slowreader

import (
	"context"
	"errors"
	"iter"
)

// ErrDown is the feed's outage.
var ErrDown = errors.New("feed: down")

// Item is one item of the feed.
type Item struct{ ID string }

// Stream is a server stream of items.
type Stream interface {
	Recv() (*Item, error)
}

// Feed is timed by slow=: its stream and iterator are timed to their end,
// with the caller's reading, and warned of; Get is not.
//
//circuitgen:guard circuit=feed errors=ErrDown slow=2s
type Feed interface {
	Get(ctx context.Context, id string) (*Item, error)
	Watch(ctx context.Context) (Stream, error)
	All(ctx context.Context) iter.Seq2[*Item, error]
}
