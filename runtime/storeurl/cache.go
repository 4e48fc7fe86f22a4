package storeurl

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// cacheParam reads and removes the query parameter cache: on (the default)
// or off.
func cacheParam(q url.Values) (bool, error) {
	if !q.Has("cache") {
		return true, nil
	}
	v := q.Get("cache")
	q.Del("cache")
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("cache=%q: want on or off", v)
}

// Bind returns the named circuit of the store for a Breaker to keep, bound
// by the store itself when it can bind (a store with local copies serves
// healthy calls from them only through its bound circuits).
func (s *Store) Bind(name string) circuit.BoundStore {
	if b, ok := s.Store.(circuit.Binder); ok {
		return b.Bind(name)
	}
	return named{s.Store, name}
}

// named is a circuit of a store that does not bind.
type named struct {
	store circuit.Store
	name  string
}

func (n named) Load(ctx context.Context) (*circuit.Record, time.Time, error) {
	return n.store.Load(ctx, n.name)
}

func (n named) Replace(ctx context.Context, prev, next *circuit.Record) error {
	return n.store.Replace(ctx, n.name, prev, next)
}

func (n named) Delete(ctx context.Context) error { return n.store.Delete(ctx, n.name) }
