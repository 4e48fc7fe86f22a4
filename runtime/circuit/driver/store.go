package driver

import (
	"context"
	"errors"
	"time"
)

// Store keeps circuit records durably and shares them between every Breaker
// that uses it. A store only loads and replaces records; every decision is
// the Breaker's.
//
// Errors other than ErrConflict reach callers wrapped in a
// *circuit.StateError; a record that exists but cannot be trusted is
// reported with an error that wraps ErrCorrupt, never as absent.
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

// ErrConflict is what a Store's Replace returns when the stored record is no
// longer the revision the caller loaded. The Breaker loads again and decides
// again; it never reaches callers.
var ErrConflict = errors.New("circuit record changed concurrently")

// ErrCorrupt is wrapped by a Store's error when a record exists but cannot be
// trusted: undecodable, of an unknown version, or inconsistent. It is never
// reset silently; Breaker.Clear removes such a record.
var ErrCorrupt = errors.New("corrupt circuit record")

// Clock is implemented by a Store whose Load returns the zero Time but whose
// processes share a better clock than the wall clock, such as the file
// store's boot clock. The Breaker calls Now only when a decision needs the
// time, and ignores the monotonic reading of the Time it returns.
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

// Notifier is implemented by a Store that finds things its Breaker's
// observers should hear about besides a circuit's state: that its dataset
// was lost or replaced (an error wrapping ErrLost), or that a server setting
// makes its guarantees unsafe (an error wrapping ErrUnsafe). circuit.New
// calls Notify once, before any call, with the function to report them to;
// report may be called from any goroutine, at any time.
type Notifier interface {
	Notify(report func(error))
}

// ErrLost is wrapped by what a Notifier reports when the store finds that
// its dataset was lost or replaced since it last saw it: a server restarted
// empty, a flush, a restore. Such a store treats every circuit as unknown
// rather than closed until a probe shows it healthy.
var ErrLost = errors.New("circuit store lost its state")

// ErrUnsafe is wrapped by what a Notifier reports when a server setting
// weakens the store's guarantees, such as a Redis server that persists
// nothing or may evict records.
var ErrUnsafe = errors.New("circuit store setting is unsafe")
