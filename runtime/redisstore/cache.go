package redisstore

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// cache holds the local copies of a cached Store: for each circuit, its
// record as last read from the server while it was closed. A copy is kept
// only while the invalidation stream (tracker.go) is live and only until the
// server says the key changed. The rules:
//
//   - only a closed record is copied, and a copy is served without the
//     server's time: the Breaker needs no time to admit a call in the closed
//     state, nor to find that a Success with no failures counted (or an
//     Ignored outcome) changes nothing;
//   - a Replace whose previous record is a copy is refused at once with
//     circuit.ErrConflict, and the copy dropped, so that the Breaker decides
//     again on a record read from the server with the server's time: every
//     transition is a compare-and-swap made on a server read;
//   - a copy is installed only if neither its key nor the stream changed
//     while it was being read (the key's epoch and the cache's epoch are
//     unchanged), so an invalidation that overtakes the reply of the read it
//     invalidates is never lost;
//   - every Replace and Delete drops the key's copy when its reply arrives,
//     so a process sees its own writes at once;
//   - losing the stream (its connection breaks, or nothing is heard from
//     the server for the stall bound) drops every copy before anything else
//     happens, and no copy is installed until the stream is live again.
type cache struct {
	// epoch grows each time the stream stops being live.
	epoch atomic.Uint64
	live  atomic.Bool
	// validUntil is when copies stop being served, in nanoseconds of the
	// monotonic clock since origin: the stall bound after the server last
	// heard from (the one heard from least recently, with several). A copy
	// is not served after it even if the goroutine that would drop it has
	// not run yet.
	validUntil atomic.Int64
	origin     time.Time

	entries sync.Map // key → *entry
	copies  sync.Map // weak.Pointer[circuit.Record] of every copy → struct{}

	stop func() // ends the tracker; set once by startCache
	done chan struct{}
}

// entry is one circuit's copy.
type entry struct {
	copy atomic.Pointer[circuit.Record] // nil when there is none

	mu    sync.Mutex
	epoch uint64 // guarded by mu: grows with every invalidation of the key
}

// fresh reports whether copies may be served now.
func (c *cache) fresh() bool { return int64(time.Since(c.origin)) < c.validUntil.Load() }

// heard records that the servers were all heard from by at, a reading of
// c.clock(), and were live then.
func (c *cache) heard(at int64, bound time.Duration) { c.validUntil.Store(at + int64(bound)) }

// clock reads the monotonic clock of validUntil.
func (c *cache) clock() int64 { return int64(time.Since(c.origin)) }

// entry returns key's entry, creating it.
func (c *cache) entry(key string) *entry {
	if e, ok := c.entries.Load(key); ok {
		return e.(*entry)
	}
	e, _ := c.entries.LoadOrStore(key, &entry{})
	return e.(*entry)
}

// reading is what a read from the server must find unchanged to install
// its record as a copy.
type reading struct {
	epoch, keyEpoch uint64
	live            bool
}

// begin is called before a read of e from the server.
func (c *cache) begin(e *entry) reading {
	var r reading
	r.epoch = c.epoch.Load() // before live: see down
	r.live = c.live.Load()
	e.mu.Lock()
	r.keyEpoch = e.epoch
	e.mu.Unlock()
	return r
}

// install keeps rec, as read from the server since r, as e's copy if it is
// closed and nothing changed in between.
func (c *cache) install(e *entry, r reading, rec *circuit.Record) {
	if !r.live || rec == nil || rec.State != circuit.StateClosed {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.epoch != r.keyEpoch || c.epoch.Load() != r.epoch {
		return
	}
	cp := new(circuit.Record)
	*cp = *rec
	w := weak.Make(cp)
	c.copies.Store(w, struct{}{})
	runtime.AddCleanup(cp, func(w weak.Pointer[circuit.Record]) { c.copies.Delete(w) }, w)
	e.copy.Store(cp)
}

// isCopy reports whether rec was served from a copy.
func (c *cache) isCopy(rec *circuit.Record) bool {
	if rec == nil {
		return false
	}
	_, ok := c.copies.Load(weak.Make(rec))
	return ok
}

// invalidate drops e's copy and makes reads in flight unable to install one.
func (e *entry) invalidate() {
	e.mu.Lock()
	e.epoch++
	e.copy.Store(nil)
	e.mu.Unlock()
}

// invalidateKey is invalidate for a key the server names.
func (c *cache) invalidateKey(key string) {
	if e, ok := c.entries.Load(key); ok {
		e.(*entry).invalidate()
	}
}

// down drops every copy: the stream is no longer live. The epoch grows
// after live is cleared, and begin reads it before live, so a read that saw
// the stream live sees a new epoch when it tries to install.
func (c *cache) down() {
	c.validUntil.Store(0)
	c.live.Store(false)
	c.epoch.Add(1)
	c.entries.Range(func(_, e any) bool {
		e.(*entry).invalidate()
		return true
	})
}

// up marks the stream live: reads that begin from now on may install copies.
func (c *cache) up() { c.live.Store(true) }
