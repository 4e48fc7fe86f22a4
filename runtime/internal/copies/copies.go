// Package copies keeps the local copies of circuit records that a
// distributed store serves without a round trip while its server's
// invalidations arrive (runtime/redisstore, runtime/sqlstore): the rules
// that make serving them safe, in one place. The store supplies the
// invalidation stream and calls Invalidate, Down, Up and Heard.
package copies

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Cache holds a store's local copies: for each circuit, its record as last
// read from the server while it was closed, or that it had none. A copy is
// kept only while the invalidation stream is live and only until the
// server says the record changed. The rules:
//
//   - only a closed record, or no record (a circuit none of whose outcomes
//     changed anything: the healthy circuit), is copied; the server's
//     notice of the record's creation invalidates a copy of none as a
//     change invalidates a record's; a copy is served without a read
//     of the server's time: the Breaker needs no time to admit a call in the
//     closed state, nor to find that a Success with no failures counted (or
//     an Ignored outcome) changes nothing; when it does need one (a
//     failure-rate window's bucket), the store's clock is the server's time
//     of its latest read carried forward on the local monotonic clock;
//   - a Replace whose previous record is a copy is refused at once with
//     driver.ErrConflict, and the copy dropped, so that the Breaker decides
//     again on a record read from the server with the server's time: every
//     transition is a compare-and-swap made on a server read. A Replace of
//     no record (the first failure's) is made at once, a copy of none or
//     not: the server's compare-and-swap on the key's absence reads the
//     server, and the record it creates is dated by the store's clock;
//   - a copy is installed only if neither its key nor the stream changed
//     while it was being read (the key's epoch and the cache's epoch are
//     unchanged), so an invalidation that overtakes the reply of the read it
//     invalidates is never lost;
//   - every Replace and Delete drops the key's copy when its reply arrives,
//     so a process sees its own writes at once;
//   - a copy is served only until the stall bound after the send time of
//     the last heartbeat the server answered on the stream (Heard), which
//     proves it had sent every invalidation before it: no notification and
//     no late answer extends it;
//   - losing the stream (its connection breaks) drops every copy before
//     anything else happens, and no copy is installed until the stream is
//     live again.
type Cache struct {
	mu sync.Mutex // orders Up and Down
	// epoch grows each time the stream stops being live.
	epoch atomic.Uint64
	live  atomic.Bool
	// validUntil is when copies stop being served, in nanoseconds of the
	// monotonic clock since origin: the stall bound after the send time of
	// the last heartbeat the servers answered (the earliest of the servers'
	// latest, with several). No copy is served after it, even if the
	// goroutine that would drop the copies has not run yet.
	validUntil atomic.Int64
	origin     time.Time

	ups    atomic.Uint64              // calls of Up, for Keep
	wanted atomic.Int64               // when (Clock) a Load last asked for a copy, to the nearest wantedGrain (Beat)
	clock  atomic.Pointer[serverTime] // the server's time as last seen (clock.go)

	entries sync.Map // key → *Entry
	copies  sync.Map // weak.Pointer[driver.Record] of every copy → struct{}
}

// New returns an empty cache whose stream is not live.
func New() *Cache { return &Cache{origin: time.Now()} }

// Entry is one circuit's copy.
type Entry struct {
	copy atomic.Pointer[driver.Record] // nil when there is none; none for a copy of no record

	mu    sync.Mutex
	epoch uint64 // guarded by mu: grows with every invalidation of the key

	// created is set when the server invalidated a copy of no record: the
	// key was written since (a record created, in practice), so its
	// absence at a later read is a loss, not a circuit never recorded.
	created   atomic.Bool
	createdAt uint64 // guarded by mu: the epoch that set created
}

// Fresh reports whether copies may be served now. Asking makes the
// heartbeat a busy process's (Beat).
func (c *Cache) Fresh() bool {
	now := int64(time.Since(c.origin))
	if now-c.wanted.Load() > int64(wantedGrain) {
		c.wanted.Store(now)
	}
	return now < c.validUntil.Load()
}

// wantedGrain is how stale Cache.wanted may be: Fresh writes it at most
// once in that time, not on every Load.
const wantedGrain = 10 * time.Millisecond

// Heard records that the servers answered heartbeats sent at sent, a
// reading of Clock, each after every invalidation it had sent before, so
// that copies may be served until sent + bound.
func (c *Cache) Heard(sent int64, bound time.Duration) { c.validUntil.Store(sent + int64(bound)) }

// Clock reads the monotonic clock of Heard.
func (c *Cache) Clock() int64 { return int64(time.Since(c.origin)) }

// Entry returns key's entry, creating it.
func (c *Cache) Entry(key string) *Entry {
	if e, ok := c.entries.Load(key); ok {
		return e.(*Entry)
	}
	e, _ := c.entries.LoadOrStore(key, &Entry{})
	return e.(*Entry)
}

// Reading is what a read from the server must find unchanged to install
// its record as a copy.
type Reading struct {
	epoch, keyEpoch uint64
	live            bool
}

// Begin is called before a read of e from the server.
func (c *Cache) Begin(e *Entry) Reading {
	var r Reading
	r.epoch = c.epoch.Load() // before live: see down
	r.live = c.live.Load()
	e.mu.Lock()
	r.keyEpoch = e.epoch
	e.mu.Unlock()
	return r
}

// none is the copy of no record.
var none = new(driver.Record)

// Install keeps rec, as read from the server since r, as e's copy if it is
// closed or nil (no record) and nothing changed in between.
func (c *Cache) Install(e *Entry, r Reading, rec *driver.Record) {
	if !r.live || rec != nil && rec.State != driver.StateClosed {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.epoch != r.keyEpoch || c.epoch.Load() != r.epoch {
		return
	}
	if rec == nil {
		e.copy.Store(none)
		return
	}
	cp := new(driver.Record)
	*cp = *rec
	w := weak.Make(cp)
	c.copies.Store(w, struct{}{})
	runtime.AddCleanup(cp, func(w weak.Pointer[driver.Record]) { c.copies.Delete(w) }, w)
	e.copy.Store(cp)
}

// IsCopy reports whether rec was served from a copy.
func (c *Cache) IsCopy(rec *driver.Record) bool {
	if rec == nil {
		return false
	}
	_, ok := c.copies.Load(weak.Make(rec))
	return ok
}

// Copy returns e's copy, nil for a copy of no record, and whether e has a
// copy. Serve it only while Fresh.
func (e *Entry) Copy() (*driver.Record, bool) {
	rec := e.copy.Load()
	if rec == none {
		return nil, true
	}
	return rec, rec != nil
}

// Invalidate drops e's copy and makes reads in flight unable to install one.
func (e *Entry) Invalidate() {
	e.mu.Lock()
	e.epoch++
	if e.copy.Swap(nil) == none {
		e.created.Store(true)
		e.createdAt = e.epoch
	}
	e.mu.Unlock()
}

// Drop is Invalidate for a write of this process: it infers no creation
// from a copy of no record, since the process knows what it wrote (a
// refused write created nothing).
func (e *Entry) Drop() {
	e.mu.Lock()
	e.epoch++
	e.copy.Store(nil)
	e.mu.Unlock()
}

// Created reports whether the server invalidated a copy of no record since
// the last read that found the key (Found): a record was written for a
// circuit this process only ever found none of.
func (e *Entry) Created() bool { return e.created.Load() }

// Found records that a read of e since r found the key (a record or a
// tombstone). A creation the server reported after r began is kept.
func (e *Entry) Found(r Reading) {
	if !e.created.Load() {
		return
	}
	e.mu.Lock()
	if e.createdAt <= r.keyEpoch {
		e.created.Store(false)
	}
	e.mu.Unlock()
}

// InvalidateKey is Invalidate for a key the server names.
func (c *Cache) InvalidateKey(key string) {
	if e, ok := c.entries.Load(key); ok {
		e.(*Entry).Invalidate()
	}
}

// Down drops every copy: the stream is no longer live. The epoch grows
// after live is cleared, and begin reads it before live, so a read that saw
// the stream live sees a new epoch when it tries to install. It infers no
// creation (Drop): the server named no key, and a circuit with no record
// whose copy of none is dropped has lost nothing.
func (c *Cache) Down() {
	c.mu.Lock()
	c.validUntil.Store(0)
	c.live.Store(false)
	c.epoch.Add(1)
	c.mu.Unlock()
	c.entries.Range(func(_, e any) bool {
		e.(*Entry).Drop()
		return true
	})
}

// InvalidateAll drops every copy, the stream staying live (a TRUNCATE).
// It infers no creation (Drop): the server named no key, and the notice
// of a record created before it came first.
func (c *Cache) InvalidateAll() {
	c.entries.Range(func(_, e any) bool {
		e.(*Entry).Drop()
		return true
	})
}

// Session returns the token of a session of the stream that begins now.
func (c *Cache) Session() uint64 { return c.epoch.Load() }

// Up marks the stream of session s live, unless it went down since s
// began (one of its connections failed): reads that begin from now on may
// install copies.
func (c *Cache) Up(s uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch.Load() == s {
		c.ups.Add(1)
		c.live.Store(true)
	}
}

// Live reports whether the stream is live.
func (c *Cache) Live() bool { return c.live.Load() }
