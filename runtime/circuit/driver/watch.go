package driver

import (
	"context"
	"sync/atomic"
)

// Watch vouches for a record a store loaded: it is still the circuit's
// current record while the circuit's change word holds the value it held
// when the record was read, and the store's epoch word the value it held
// then. The zero Watch vouches for nothing.
//
// A store that keeps such words lets a Breaker keep the record it loaded
// and use it again with two loads of memory and no call into the store: the
// file store's change words are shared by every process of its directory,
// and a writer changes a circuit's word, under the circuit's lock, before it
// replaces the record and again after; its epoch word is the process's own,
// and moves when the store must drop every copy at once.
type Watch struct {
	word, epoch   *atomic.Uint64
	value, epochV uint64
}

// NewWatch returns the Watch of a record read while word held value and
// epoch held epochValue, both stable before and after the read. An epoch
// value of 0 vouches for nothing: a store's epoch word is never 0 while it
// vouches, so that memory it zeroes to let go of its words vouches for
// nothing either.
func NewWatch(word *atomic.Uint64, value uint64, epoch *atomic.Uint64, epochValue uint64) Watch {
	if word == nil || epoch == nil || epochValue == 0 {
		return Watch{}
	}
	return Watch{word: word, value: value, epoch: epoch, epochV: epochValue}
}

// Holds reports whether the record w came with is still current.
func (w *Watch) Holds() bool {
	return w.word != nil && w.word.Load() == w.value && w.epoch.Load() == w.epochV
}

// Unchanged reports whether the circuit's change word still holds the value
// it held when the record was read, leaving the epoch word aside: whether
// any process changed the record since. A Watch that held a moment ago and
// is still Unchanged vouches that no write came in between.
func (w *Watch) Unchanged() bool { return w.word != nil && w.word.Load() == w.value }

// Watcher is implemented by a Store that can vouch for the records it
// loads with a Watch. The Breaker then keeps the record of each circuit it
// loaded last and uses it again, without calling the store, while its Watch
// holds: the healthy call of such a store makes no call into it.
type Watcher interface {
	// LoadWatched is Load, with the Watch of the record returned: the zero
	// Watch when the store cannot vouch for it (a change was in progress
	// during the read), and then the Breaker loads again next time. Its
	// time is that of the store's Clock (or the local clock): a Watcher's
	// Load returns the zero Time.
	LoadWatched(ctx context.Context, name string) (rec *Record, w Watch, err error)
	// Refresh checks the store's epoch word when it is due for a check (a
	// store may move it at intervals, to look at what its words stand for),
	// and puts it back when nothing changed: a Watch that failed only for
	// that holds again. The Breaker calls it before it loads a record it
	// keeps again.
	Refresh(ctx context.Context) error
}
