package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/lost"
	"github.com/circuitgen/circuitgen/runtime/internal/notify"
)

// Store is a driver.Store over one directory. It is safe for concurrent
// use; processes that open the same directory share every circuit in it.
type Store struct {
	dir   string
	epoch time.Time // a monotonic reading: Store.mono counts from it

	entriesMu sync.RWMutex
	entries   map[string]*entry // circuit name → its entry (under entriesMu)

	mu          sync.Mutex                 // serializes finding and checking the index
	m           atomic.Pointer[mapping]    // the mapped index, if any
	armed       atomic.Bool                // the recheck's ticker runs (arm, due)
	last        int64                      // the anchor this process validated for this boot (under mu)
	lastSet     bool                       //
	wall        func() time.Time           // the wall clock, for anchoring the boot clock
	clkMu       sync.Mutex                 //
	clk         atomic.Pointer[clockState] //
	clkAnchor   int64                      // the anchor of the last clock read (under clkMu)
	clkSet      bool                       //
	anchorMoved atomic.Int64               // the Store.mono reading at which this process last took another anchor; 0: never

	bootOnce sync.Once
	bootHash uint64

	win windowFile // the shared window counts (window.go)

	reports notify.List // Notify's
}

// Option configures a Store.
type Option func(*Store)

// WithWallClock replaces the wall clock the store anchors its boot clock to.
// It is meant for tests that step the wall clock: deadlines follow the boot
// clock and do not move with it.
func WithWallClock(now func() time.Time) Option { return func(s *Store) { s.wall = now } }

// entry is what the store knows of one circuit. It holds no file open. Its
// key and tag are computed from its name when a slow path needs them, not
// stored: a process may hold many circuits.
type entry struct {
	s    *Store
	name string

	ctr    atomic.Pointer[counter] // its counter in the current mapping, once found
	fast   atomic.Pointer[known]   // its record as of a stable counter value
	failed atomic.Bool             // a write failed, and none has succeeded since

	seen   atomic.Bool            // this process last read or wrote a record, not none (lost.go)
	seenIn atomic.Pointer[fileID] // the index it last read or wrote a record under, nil for none (lost.go)
	last   lost.Last              // the latest revision of the record this process saw (lost.go)
}

// known is a record (nil: none) as of the value seq of the counter c,
// taken while its mapping's trust was trust. A copy of an open or
// half-open record under a spill counter is used only until the store's
// mono time until (0: no end): see reread.
type known struct {
	c     counter
	seq   uint64
	rec   *driver.Record
	trust uint64
	until int64
}

// usable reports whether k may stand for a read of the file at mono time
// now (read only when k has an end).
func (k *known) usable(s *Store) bool { return k.until == 0 || s.mono() < k.until }

// reread is how long a process uses its copy of an open or half-open
// record of a circuit without a slot of its own before it reads the file
// again. A spill counter carries no mark of what its circuits' files hold,
// so a newcomer cannot tell such a record removed behind the store's back
// from none, and takes the circuit for a new, closed one; the process that
// holds the open record finds the loss on this read, and makes the circuit
// unknown (lost.go). The bound: a newcomer admits calls as closed for at
// most reread after the removal, while a process that read the record
// calls. Copies of closed records, and of records with a slot, have no
// end: a closed record lost reads as a closed circuit, and a slot's mark
// tells a missing file.
const reread = recheck

var (
	_ driver.Store    = (*Store)(nil)
	_ driver.Binder   = (*Store)(nil)
	_ driver.Clock    = (*Store)(nil)
	_ driver.Notifier = (*Store)(nil)
	_ driver.Watcher  = (*entry)(nil)
)

// Open returns a store over dir. It creates and changes nothing: the
// directory is created, 0700, on the first write. It checks that the store
// can use dir, and returns a *DirError saying what is wrong and how to fix
// it otherwise: an existing dir must be a directory, not a symlink, owned by
// this process's user, not writable by group or others, and readable,
// writable and searchable by this process; a missing one must have a
// nearest existing ancestor that is a directory this process may create
// entries in. Access is checked with faccessat(2) and the effective ids,
// not by writing. On systems other than linux and darwin Open returns an
// error naming the stores to use instead.
func Open(dir string, opts ...Option) (*Store, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, errors.New("filestore: empty directory path")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	if err := verifyDir(abs); err != nil {
		return nil, err
	}
	s := &Store{dir: abs, wall: time.Now, epoch: time.Now()}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Dir returns the store's directory, as an absolute path.
func (s *Store) Dir() string { return s.dir }

// mono returns the time since the store was opened, from the monotonic
// clock: no system call.
func (s *Store) mono() int64 { return int64(time.Since(s.epoch)) }

// entry returns the store's entry for the circuit name.
// The Breaker binds each circuit once, so this runs once per circuit on
// its paths; only the by-name Store methods look up a circuit per call.
func (s *Store) entry(name string) *entry {
	s.entriesMu.RLock()
	e := s.entries[name]
	s.entriesMu.RUnlock()
	if e != nil {
		return e
	}
	s.entriesMu.Lock()
	defer s.entriesMu.Unlock()
	if e := s.entries[name]; e != nil {
		return e
	}
	if s.entries == nil {
		s.entries = make(map[string]*entry)
	}
	e = &entry{s: s, name: name}
	s.entries[name] = e
	return e
}

// key returns the circuit's key: the hex SHA-256 of its name, which names
// its files.
func (e *entry) key() string {
	sum := sha256.Sum256([]byte(e.name))
	return hex.EncodeToString(sum[:])
}

// tag returns the circuit's tag in the change index and the window files.
func (e *entry) tag() uint64 { return tagOf(sha256.Sum256([]byte(e.name))) }

func (e *entry) recordName() string { return e.key() + ".json" }
func (e *entry) lockName() string   { return e.key() + ".lock" }
func (e *entry) tempName() string   { return e.key() + ".json.tmp-next" }
func (e *entry) recordPath() string { return filepath.Join(e.s.dir, e.recordName()) }
func (e *entry) lockPath() string   { return filepath.Join(e.s.dir, e.lockName()) }
func (e *entry) tempPath() string   { return filepath.Join(e.s.dir, e.tempName()) }

// Bind returns the circuit name of the store, resolved once: its key and
// its counter in the change index.
func (s *Store) Bind(name string) driver.BoundStore { return s.entry(name) }

// Load returns the circuit's record, or nil when it has none. Its time is
// the zero Time: the Breaker reads the store's clock (Now) only when a
// decision needs it. While the change index shows the record unchanged
// since this process last read it, Load makes no system call.
func (s *Store) Load(ctx context.Context, name string) (*driver.Record, time.Time, error) {
	return s.entry(name).Load(ctx)
}

// Load is Store.Load for the bound circuit.
func (e *entry) Load(ctx context.Context) (*driver.Record, time.Time, error) {
	if k := e.fast.Load(); k != nil && k.c.m.trust.Load() == k.trust {
		if k.c.m.load(k.c.off) == k.seq && k.usable(e.s) {
			return k.rec, time.Time{}, nil
		}
	}
	rec, err := e.loadSlow(ctx)
	return rec, time.Time{}, err
}

// LoadWatched is Load, with the Watch of the record: the counter it was
// read under and the mapping's trust, the two words Load's fast path
// compares. A copy with an end (reread), or taken while the mapping was
// due for a check, gets none: Load decides on it each time.
func (e *entry) LoadWatched(ctx context.Context) (*driver.Record, driver.Watch, error) {
	rec, _, err := e.Load(ctx)
	if err != nil {
		return nil, driver.Watch{}, err
	}
	// A copy a racing Load stored before it saw a write fail (and took
	// back) must get no Watch: failed is set before the trust moves.
	k := e.fast.Load()
	if k == nil || k.rec != rec || k.until != 0 || k.trust&trustState != trustFresh || e.failed.Load() {
		return rec, driver.Watch{}, nil
	}
	return rec, driver.NewWatch(k.c.m.word(k.c.off), k.seq, &k.c.m.trust, k.trust), nil
}

// loadSlow reads the record from its file, and remembers it as of its
// counter when the counter was stable and unchanged across the read. A
// record found lost is treated as unknown (lost.go).
func (e *entry) loadSlow(ctx context.Context) (*driver.Record, error) {
	return e.loadFile(ctx, lossesHandled)
}

// lossesHandled is how many losses of the record, one after another, a
// Load handles (lost.go): the record lost again while it is made unknown
// is made unknown again, this many times, before Load fails.
const lossesHandled = 3

// loadFile is loadSlow; with judge above zero, it tells whether what it
// read is a loss of the record, and handles it, with judge-1 more losses
// to handle after it.
func (e *entry) loadFile(ctx context.Context, judge int) (*driver.Record, error) {
	if e.failed.Load() {
		if err := e.retryWrite(ctx); err != nil {
			return nil, err
		}
	}
	// The index is made on the first Load, with the directory: it is what
	// lets a circuit with no record, the healthy one, be served from a
	// copy, with no system call.
	m, err := e.s.current(ctx, needIndex)
	if err != nil {
		return nil, err
	}
	seen := e.last.Begin()
	if m == nil { // no index yet: nothing to remember by
		rec, err := e.s.read(e)
		if err != nil {
			return nil, err
		}
		return e.judged(ctx, judge, rec, seen, counter{}, 0, false)
	}
	c := e.counterIn(m, false)
	trust := m.trust.Load() // before the counter: a check that moves it after drops the copy
	fresh := trust&trustState == trustFresh
	before := m.load(c.off)
	if k := e.fast.Load(); fresh && k != nil && k.c == c && k.seq == before && k.trust == trust && k.usable(e.s) {
		return k.rec, nil // the mapping was checked; the record is unchanged
	}
	var rec *driver.Record
	settled := false
	for attempt := 1; ; attempt++ {
		if judge > 0 && !c.stable(before) {
			before = waitStable(m, c, before)
		}
		rec, err = e.s.read(e)
		if err != nil {
			return nil, err
		}
		after := m.load(c.off)
		settled = c.stable(before) && after == before
		if settled && !c.owned {
			// A writer may have claimed a slot for the circuit between the
			// look-up and the first load, and bumped the spill counter
			// before it: its changes go to the slot, which this copy would
			// not watch.
			if e.counterIn(m, false) != c {
				settled = false
			}
		}
		if judge == 0 {
			break
		}
		if rec == nil && !settled {
			// No file, read while the circuit changed: the change index
			// cannot say whether the file is gone behind the store's back
			// (lost) or was never written, and no record admits calls as
			// closed with no write to catch it. Read again once the change
			// has ended; a circuit that changes under every read fails
			// closed.
			if attempt < unsettledReads {
				c, before = e.again(m, c, after)
				continue
			}
			return nil, errors.New("the record changed under each of its reads: none could be judged")
		}
		why := e.lostWhy(rec, seen, c, before, settled)
		if why == "" {
			break
		}
		if !settled && attempt < unsettledReads {
			// The record changed during the read: a Clear, say, which
			// writes a record of a fresh incarnation over the one the mark
			// names. What was read is judged only on a read the counter
			// vouches for: read again once the change has ended.
			c, before = e.again(m, c, after)
			continue
		}
		return e.lost(ctx, rec, why, judge-1)
	}
	var k *known
	if settled && fresh {
		k = e.s.newKnown(c, before, rec, trust)
		rec = k.rec
	}
	e.saw(rec, m)
	if k != nil {
		e.fast.Store(k)
		e.share(k)
		if e.failed.Load() { // a write failed meanwhile: no copy may outlive it
			e.fast.CompareAndSwap(k, nil)
		}
	}
	return rec, nil
}

// newKnown returns the copy of rec (nil: none), read as of the value seq of
// c under trust, with its end (reread). A record read is copied into the copy's allocation, so
// that a call finds both in adjacent memory: with many circuits called at
// random, one cache miss fewer.
func (s *Store) newKnown(c counter, seq uint64, rec *driver.Record, trust uint64) *known {
	if rec == nil {
		return &known{c: c, seq: seq, trust: trust}
	}
	both := &struct {
		k known
		r driver.Record
	}{k: known{c: c, seq: seq, trust: trust}, r: *rec}
	both.k.rec = &both.r
	both.k.until = s.reread(c, rec)
	return &both.k
}

// reread returns the end of a copy of rec under c (0: none; see reread).
func (s *Store) reread(c counter, rec *driver.Record) int64 {
	if c.owned || rec == nil || rec.State == driver.StateClosed {
		return 0
	}
	return s.mono() + int64(reread)
}

// waitStable waits, up to stableWait, for a change of the circuit in
// progress (c's counter at v) to end, and returns the counter's value
// then, or v. A read begun while another caller writes would find the file
// as it was before the write, with no mark to judge it by (lost.go): a
// record put back behind the store's back would pass for the circuit's.
// A writer that died mid-change leaves the counter unstable until the next
// change; the read then goes on unjudged by the mark, as before.
func waitStable(m *mapping, c counter, v uint64) uint64 {
	deadline := time.Now().Add(stableWait)
	for !c.stable(v) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Microsecond)
		v = m.load(c.off)
	}
	return v
}

// again returns the counter, and its value, that a read of the record
// which its counter c could not vouch for (after being c's value after the
// read) is made again under: c, unless c is a spill counter and a writer has
// since claimed a slot for the circuit, whose counter it then is (under c,
// no read would ever be vouched for again).
func (e *entry) again(m *mapping, c counter, after uint64) (counter, uint64) {
	if c.owned {
		return c, after
	}
	if now := e.counterIn(m, false); now != c {
		return now, m.load(now.off)
	}
	return c, after
}

// unsettledReads is how many times loadFile reads a record that looks lost
// while the circuit changes under the read, before it judges what it read
// (or, for no file, fails closed). Several processes handling one loss at
// once (each probing, claiming, reporting) change a circuit several times
// in a row; each read costs tens of microseconds, and is made only while
// the circuit changes.
const unsettledReads = 8

// stableWait bounds waitStable: far longer than a change takes (a write,
// an fsync and a rename).
const stableWait = 50 * time.Millisecond

// judged returns rec, read with no index, or handles its loss.
func (e *entry) judged(ctx context.Context, judge int, rec *driver.Record, seen lost.Seen, c counter, v uint64, settled bool) (*driver.Record, error) {
	if judge > 0 {
		if why := e.lostWhy(rec, seen, c, v, settled); why != "" {
			return e.lost(ctx, rec, why, judge-1)
		}
	}
	e.saw(rec, nil)
	return rec, nil
}

// counterIn returns the circuit's counter in m; with claim (writers, under
// the circuit's lock), claiming a slot for it when one is free.
//
// A slot found before is used again while it still holds the circuit's tag.
// An index cut short and extended again (its header whole, so still a
// usable index) has lost its tags: a writer that went on changing the slot
// it found would change a counter that readers, finding the slot free, no
// longer watch (they use the spill counter). So a writer claims the slot
// anew (the same one, when it is still free), bumping the spill counter as
// every claim does, and a reader looks the slot up again.
func (e *entry) counterIn(m *mapping, claim bool) counter {
	tag := e.tag()
	if c := e.ctr.Load(); c != nil && c.m == m {
		if !c.owned {
			return *c
		}
		t := m.load(c.off - 8)
		if t == tag {
			return *c
		}
		e.ctr.CompareAndSwap(c, nil)
		if claim && t == 0 && m.word(c.off-8).CompareAndSwap(0, tag) {
			bumpSpill(m, tag)
			e.ctr.Store(c)
			return *c
		}
	}
	c, fresh, final := m.counterOf(tag, claim)
	if fresh {
		bumpSpill(m, tag)
	}
	if final {
		e.ctr.Store(&c)
	}
	return c
}

// bumpSpill changes the spill counter of tag once, after a writer claimed a
// slot for the circuit: readers may hold copies by the spill counter, and
// drop them.
func bumpSpill(m *mapping, tag uint64) {
	spill := m.spillOf(tag)
	spill.end(spill.begin(), markNone)
}

// share points the circuit's cached counter at k's copy of it when the two
// are equal, so that the entry keeps one allocation for both, not two. A
// known is never changed once made.
func (e *entry) share(k *known) {
	if p := e.ctr.Load(); p != nil && p != &k.c && *p == k.c {
		e.ctr.CompareAndSwap(p, &k.c)
	}
}

// read reads the record from its file, without a lock.
func (s *Store) read(e *entry) (*driver.Record, error) {
	if err := fault("read", "open", e.recordPath()); err != nil {
		return nil, fmt.Errorf("open record: %w", err)
	}
	if err := s.checkDir(false); err != nil {
		if errors.Is(err, errNoDir) {
			return nil, nil
		}
		return nil, err
	}
	return e.named(readRecord(e.recordPath()))
}

// readIn reads the record from its file in d, the directory a writer
// holds the circuit's lock in.
func (s *Store) readIn(d *dirFD, e *entry) (*driver.Record, error) {
	if err := fault("read", "open", e.recordPath()); err != nil {
		return nil, fmt.Errorf("open record: %w", err)
	}
	return e.named(readRecordIn(d, e.recordName()))
}

// named checks that a record read for the circuit is the circuit's.
func (e *entry) named(rec *driver.Record, err error) (*driver.Record, error) {
	if err != nil || rec == nil {
		return nil, err
	}
	if rec.Name != e.name {
		return nil, fmt.Errorf("record %s: %w: it holds circuit %q", e.recordPath(), driver.ErrCorrupt, rec.Name)
	}
	rec.Name = e.name // one copy of the name, not one per record read
	return rec, nil
}

// Replace stores next as the circuit's record if the stored one is still
// prev, under the circuit's lock.
func (s *Store) Replace(ctx context.Context, name string, prev, next *driver.Record) error {
	return s.entry(name).Replace(ctx, prev, next)
}

// Replace is Store.Replace for the bound circuit.
func (e *entry) Replace(ctx context.Context, prev, next *driver.Record) error {
	return e.replace(ctx, prev, next, false)
}

// replace is Replace; with lossKnown (lost.go), a file found missing though
// the last change left one is no reason to refuse: the caller decided on
// that loss.
func (e *entry) replace(ctx context.Context, prev, next *driver.Record, lossKnown bool) error {
	if next == nil || next.Name != e.name {
		return fmt.Errorf("replace %q: the new record must be that circuit's", e.name)
	}
	if err := next.Check(); err != nil {
		return fmt.Errorf("replace %q: refusing to write an inconsistent record: %w", e.name, err)
	}
	data, err := encode(next)
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	return e.wrote(e.change(ctx, func(d *dirFD, c counter) error {
		cur, err := e.s.readIn(d, e)
		if err != nil {
			return err
		}
		if !driver.SameRevision(cur, prev) {
			e.unknown(c, cur)
			return driver.ErrConflict
		}
		if cur == nil && !lossKnown && c.leftRecord() {
			// No file, though the last change left one: it was removed
			// behind the store's back, after (or while) the caller read
			// it. The caller's decision on no record would admit calls as
			// closed: it reads again, and finds the loss (lost.go).
			return driver.ErrConflict
		}
		if !e.s.decidedBy(c.m, next.UpdatedAt) {
			// The decision was made by another anchor than the index's (the
			// index was made anew, or took an earlier anchor): make it again
			// by the index's clock.
			e.s.clockWrong()
			return driver.ErrConflict
		}
		c, seq, err := e.s.write(ctx, d, e, c, next, data)
		if err == nil {
			e.saw(next, c.m)
			k := &known{c: c, seq: seq, rec: next, trust: c.m.trust.Load(), until: e.s.reread(c, next)}
			e.fast.Store(k)
			e.share(k)
		}
		return err
	}))
}

// unknown handles a record found, under the lock, to differ from the one the
// caller decided on. When the counter says this process's copy is current,
// the file changed behind the store's back (removed or edited by hand):
// the counter is moved on, keeping its mark, so that every process reads the
// file again and finds it lost (lost.go). The caller holds the circuit's
// lock.
func (e *entry) unknown(c counter, cur *driver.Record) {
	k := e.fast.Swap(nil)
	if k == nil || k.c != c || driver.SameRevision(k.rec, cur) {
		return
	}
	if v := c.m.load(c.off); v == k.seq {
		c.end(c.begin(), markOfValue(v))
	}
}

// Delete removes the circuit's record, even a corrupt one, under its lock.
// The lock file stays: deleting it would let two processes hold "the" lock
// on different inodes.
func (s *Store) Delete(ctx context.Context, name string) error {
	return s.entry(name).Delete(ctx)
}

// Delete is Store.Delete for the bound circuit.
func (e *entry) Delete(ctx context.Context) error {
	if err := e.s.checkDir(false); err != nil {
		if errors.Is(err, errNoDir) {
			e.seen.Store(false)
			return nil
		}
		return err
	}
	err := e.wrote(e.change(ctx, func(d *dirFD, c counter) error { return e.s.remove(ctx, d, e, c) }))
	if err == nil {
		e.seen.Store(false) // cleared: its absence is no loss
	}
	return err
}

// change runs fn in the state directory d, under the circuit's lock there,
// with its counter in d's index, checked to be the directory's current one:
// a change no other process would see is never made. Without a usable index
// nothing is written. A directory replaced (its path made to name another)
// between the opening of d and those checks is opened anew, a few times.
func (e *entry) change(ctx context.Context, fn func(*dirFD, counter) error) error {
	for attempt := 1; ; attempt++ {
		err := e.changeIn(ctx, fn)
		if !errors.Is(err, errDirReplaced) || attempt == 3 {
			return err
		}
	}
}

// errDirReplaced reports that the state directory's path named another
// directory than the one a write opened, before it changed anything.
var errDirReplaced = errors.New("the state directory was replaced (removed or moved, and made anew) during the write")

// changeIn is one attempt of change.
func (e *entry) changeIn(ctx context.Context, fn func(*dirFD, counter) error) error {
	s := e.s
	d, err := s.openDir()
	if err != nil {
		return err
	}
	defer d.close()
	return s.locked(ctx, d, e, func() error {
		m, err := s.current(ctx, needWrite)
		if err != nil {
			return err
		}
		if id, err := d.id(indexName); err != nil || id.dev != m.id.dev || id.ino != m.id.ino {
			return errDirReplaced // d's index is not the one mapped
		}
		return fn(d, e.counterIn(m, true))
	})
}

// wrote records the outcome of a write: once a write fails, no copy of the
// record is used and Load fails until a write succeeds (fail closed).
func (e *entry) wrote(err error) error {
	switch {
	case err == nil:
		e.failed.Store(false)
	case !errors.Is(err, driver.ErrConflict):
		e.failed.Store(true)
		e.fast.Store(nil)
		if m := e.s.m.Load(); m != nil {
			m.drop() // no Watch of a copy holds now (LoadWatched)
		}
	}
	return err
}

// retryWrite is Load's path for a circuit whose last write failed: it writes
// a temporary file under the circuit's lock with a checked index, which
// makes every step of a record write but the rename, and removes it. Only
// when that succeeds does Load go on.
func (e *entry) retryWrite(ctx context.Context) error {
	err := e.wrote(e.change(ctx, func(d *dirFD, c counter) error { return e.s.trial(d, e) }))
	if err != nil {
		return fmt.Errorf("a write of this circuit failed, and no call is admitted until one succeeds: %w", err)
	}
	return nil
}
