package circuit

import (
	"context"
	"time"
)

// Store keeps circuit records durably and shares them between every Breaker
// that uses it. A store only loads and replaces records; every decision is
// made by Admit and Settle in this package. runtime/storetest is the
// conformance suite every Store must pass.
//
// Errors other than ErrConflict reach callers wrapped in a *StateError; a
// record that exists but cannot be trusted is reported with an error that
// wraps ErrCorrupt, never as absent.
//
// A Store may implement optional interfaces: Binder, Clock, WindowStore,
// WindowSharer. A Store that wraps another (adding methods of its own, as
// storeurl.Store does) has a method Unwrap() Store returning it, so that a
// Breaker over the wrapper still finds them (see StoreAs).
type Store interface {
	// Load returns the circuit's current record, or nil when there is none,
	// and the store's time now: the clock every cooperating process agrees
	// on, such as a database server's. A store whose processes share a
	// local clock returns the zero Time instead, and the Breaker reads that
	// clock (the store's Clock, or the wall clock) only when a decision
	// needs it. The returned record is shared and must not be modified.
	Load(ctx context.Context, name string) (rec *Record, now time.Time, err error)
	// Replace atomically stores next as the circuit's record, provided the
	// stored record is still prev (SameRevision; nil meaning none).
	// Otherwise it stores nothing and returns ErrConflict.
	Replace(ctx context.Context, name string, prev, next *Record) error
	// Delete removes the circuit's record, even a corrupt one. Deleting an
	// absent record is not an error.
	Delete(ctx context.Context, name string) error
}

// StoreAs finds the first store in s's chain that implements T, one of the
// optional interfaces of a Store, and returns it as a T. The chain is s,
// then the store its Unwrap() Store method returns, and so on, as
// errors.As looks through wrapped errors. New finds every optional
// interface this way.
func StoreAs[T any](s Store) (T, bool) {
	for s != nil {
		if c, ok := s.(T); ok {
			return c, true
		}
		u, ok := s.(interface{ Unwrap() Store })
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	var zero T
	return zero, false
}

// Clock is implemented by a Store whose Load returns the zero Time but whose
// processes share a better clock than the wall clock, such as the file
// store's boot clock. The Breaker calls Now only when a decision needs the
// time.
type Clock interface {
	Now() time.Time
}

// Binder is implemented by a Store that can resolve a circuit once, so that
// the Breaker does not look the name up again on every call (hashing it,
// finding its files or keys). The Breaker binds each circuit name once.
type Binder interface {
	Bind(name string) BoundStore
}

// BoundStore is one circuit of a Store: Store's methods without the name.
type BoundStore interface {
	Load(ctx context.Context) (rec *Record, now time.Time, err error)
	Replace(ctx context.Context, prev, next *Record) error
	Delete(ctx context.Context) error
}

// named binds a circuit of a Store that is not a Binder.
type named struct {
	store Store
	name  string
}

func (n *named) Load(ctx context.Context) (*Record, time.Time, error) {
	return n.store.Load(ctx, n.name)
}

func (n *named) Replace(ctx context.Context, prev, next *Record) error {
	return n.store.Replace(ctx, n.name, prev, next)
}

func (n *named) Delete(ctx context.Context) error { return n.store.Delete(ctx, n.name) }

// WindowStore is implemented by a Store that keeps the window counts of the
// rate rule (Policy.FailureRate) itself, shared by every process that uses
// it, such as the file store, which maps them from a file in its directory.
// With a Store that is not a WindowStore, each Breaker counts in its own
// memory, and the rate rule sees that process's calls only.
type WindowStore interface {
	// WindowCells returns the cells of the named circuit's window of span w
	// (a valid Policy.Window). The Breaker asks once per circuit and span,
	// and then counts in them with atomic operations only.
	WindowCells(name string, w time.Duration) (*WindowCells, error)
}
