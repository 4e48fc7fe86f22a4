package filestore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Store is a driver.Store over one directory. It is safe for concurrent
// use; processes that open the same directory share every circuit in it.
// It keeps no copy of a record: the Breaker keeps the records it loads,
// with the Watch the store gives them (driver.Watcher).
type Store struct {
	dir   string
	epoch time.Time        // a monotonic reading: the store's clock counts from it
	wall  func() time.Time // the wall clock, for anchoring the boot clock

	// mu serializes finding, checking and anchoring the index: a channel
	// of one, so that a caller waiting for it is bounded by its context.
	mu    chan struct{}
	m     atomic.Pointer[mapping] // the mapped index, if any
	armed atomic.Bool             // the recheck's ticker runs (indexfile.go)

	clk      atomic.Pointer[clockState] // the last reading of the store's clock (clock.go)
	bootHash atomic.Uint64              // this boot's hash, once read (clock.go)

	// failed holds the circuits whose last write failed, by name, each with
	// the failure's number (failures counts them), nfailed how many: their
	// loads fail until a write succeeds (fail closed).
	failed   sync.Map
	failures atomic.Uint64
	nfailed  atomic.Int64

	win windowFile // the shared window counts (window.go)
}

// Option configures a Store.
type Option func(*Store)

// WithWallClock replaces the wall clock the store anchors its boot clock to.
// It is meant for tests that step the wall clock: deadlines follow the boot
// clock and do not move with it.
func WithWallClock(now func() time.Time) Option { return func(s *Store) { s.wall = now } }

var (
	_ driver.Store   = (*Store)(nil)
	_ driver.Clock   = (*Store)(nil)
	_ driver.Watcher = (*Store)(nil)
)

// Open returns a store over dir. It creates and changes nothing: the
// directory is created, 0700, on the first Load. It checks that the store
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
	s := &Store{dir: abs, wall: time.Now, epoch: time.Now(), mu: make(chan struct{}, 1)}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Dir returns the store's directory, as an absolute path.
func (s *Store) Dir() string { return s.dir }

// A circuit's files are named by its key, the hex SHA-256 of its name; its
// counter in the change index and its window slots by its tag.
func recordName(name string) string { return driver.Key(name) + ".json" }
func lockName(name string) string   { return driver.Key(name) + ".lock" }
func tempName(name string) string   { return driver.Key(name) + ".json.tmp-next" }
func tag(name string) uint64        { return tagOf(sha256.Sum256([]byte(name))) }

func (s *Store) path(file string) string { return filepath.Join(s.dir, file) }

// Load returns the circuit's record, or nil when it has none. Its time is
// the zero Time: the Breaker reads the store's clock (Now) only when a
// decision needs it.
func (s *Store) Load(ctx context.Context, name string) (*driver.Record, time.Time, error) {
	rec, _, err := s.LoadWatched(ctx, name)
	return rec, time.Time{}, err
}

// LoadWatched reads the circuit's record from its file, and vouches for it
// with a Watch (driver.Watcher) when the change index shows no change of
// the circuit in progress or made during the read: the circuit's counter
// and the mapping's trust, as they were before the read. The index and
// the directory are made on the first Load: they are what lets a circuit
// with no record, the healthy one, be used again with no system call.
func (s *Store) LoadWatched(ctx context.Context, name string) (*driver.Record, driver.Watch, error) {
	if s.failing(name) {
		if err := s.retryWrite(ctx, name); err != nil {
			return nil, driver.Watch{}, err
		}
	}
	m, err := s.current(ctx, false)
	if err != nil {
		return nil, driver.Watch{}, err
	}
	t := tag(name)
	c := m.counterOf(t)
	trust := m.trust.Load() // before the counter and the failed writes: a later move drops the Watch
	before := m.load(c.off)
	var rec *driver.Record
	switch err := s.checkDir(false); {
	case errors.Is(err, errNoDir):
	case err != nil:
		return nil, driver.Watch{}, err
	default:
		if rec, err = s.read(name); err != nil {
			return nil, driver.Watch{}, err
		}
	}
	// A writer may claim a slot for the circuit after the look-up, bumping
	// the spill counter before the first load: its changes then go to the
	// slot, which a Watch of the spill counter would not see.
	if !c.stable(before) || m.load(c.off) != before || trust&trustState != trustFresh ||
		!c.owned && m.counterOf(t) != c || s.failing(name) {
		return rec, driver.Watch{}, nil
	}
	return rec, driver.NewWatch(m.word(c.off), before, &m.trust, trust), nil
}

// Refresh checks the change index when its recheck is due
// (driver.Watcher): the Watches given before hold again when it is still
// the directory's, unchanged.
func (s *Store) Refresh(ctx context.Context) error {
	_, err := s.current(ctx, false)
	return err
}

// read reads the circuit's record from its file, without a lock, in a
// directory checked (checkDir) by the caller.
func (s *Store) read(name string) (*driver.Record, error) {
	path := s.path(recordName(name))
	if err := fault("read", "open", path); err != nil {
		return nil, fmt.Errorf("open record: %w", err)
	}
	rec, err := readRecord(path)
	if err != nil || rec == nil {
		return nil, err
	}
	if rec.Name != name {
		return nil, fmt.Errorf("record %s: %w: it holds circuit %q", path, driver.ErrCorrupt, rec.Name)
	}
	rec.Name = name // one copy of the name, not one per record read
	return rec, nil
}

// Replace stores next as the circuit's record if the stored one is still
// prev, under the circuit's lock. A conflict moves the circuit's counter:
// a copy of the record may be of a file that is no longer there (changed
// behind the store's back), and every process reads it again.
func (s *Store) Replace(ctx context.Context, name string, prev, next *driver.Record) error {
	if next == nil || next.Name != name {
		return fmt.Errorf("replace %q: the new record must be that circuit's", name)
	}
	if err := next.Check(); err != nil {
		return fmt.Errorf("replace %q: refusing to write an inconsistent record: %w", name, err)
	}
	data, err := encode(next)
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	return s.changed(ctx, name, func(c counter) error {
		cur, err := s.read(name)
		if err != nil {
			return err
		}
		if !driver.SameRevision(cur, prev) {
			c.end(c.begin())
			return driver.ErrConflict
		}
		return s.write(name, c, data)
	})
}

// Delete removes the circuit's record, even a corrupt one, under its lock.
// The lock file stays: deleting it would let two processes hold "the" lock
// on different inodes.
func (s *Store) Delete(ctx context.Context, name string) error {
	if err := s.checkDir(false); err != nil {
		if errors.Is(err, errNoDir) {
			return nil
		}
		return err
	}
	return s.changed(ctx, name, func(c counter) error { return s.remove(name, c) })
}

// change runs fn under the circuit's lock, with its counter in the
// directory's index, checked against the file when the lock is taken and
// anchored first.
func (s *Store) change(ctx context.Context, name string, fn func(counter) error) (err error) {
	if err := s.checkDir(true); err != nil {
		return err
	}
	path := s.path(lockName(name))
	if err := fault("lock", "open", path); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	fl, err := lockFile(ctx, path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := fl.Close(); cerr != nil && err == nil { // Close unlocks
			err = fmt.Errorf("unlock %s: %w", path, cerr)
		}
	}()
	m, err := s.current(ctx, true)
	if err != nil {
		return err
	}
	err = fn(m.claim(tag(name)))
	if m.trust.Load()&trustState == trustRetired {
		// A recheck released the mapping meanwhile: the counter's moves
		// may have gone to its private memory, and the directory's index
		// not moved. Move it there, or fail, so that no Watch of another
		// process keeps vouching for the record replaced.
		m, cerr := s.current(ctx, true)
		if cerr != nil {
			return errors.Join(err, fmt.Errorf("change index after a recheck: %w", cerr))
		}
		c := m.claim(tag(name))
		c.end(c.begin())
	}
	return err
}

// failing reports whether the circuit's last write failed.
func (s *Store) failing(name string) bool {
	if s.nfailed.Load() == 0 {
		return false
	}
	_, ok := s.failed.Load(name)
	return ok
}

// changed runs change for the circuit and records its outcome: once a
// write fails, the circuit's loads fail until a write succeeds (fail
// closed), and no Watch given before holds (mapping.drop; LoadWatched
// gives none meanwhile). A write clears only a failure that came before
// it began: one that succeeded before another failed, and returns after,
// leaves that failure in place.
func (s *Store) changed(ctx context.Context, name string, fn func(counter) error) error {
	before := s.failures.Load()
	err := s.change(ctx, name, fn)
	switch {
	case err == nil:
		if v, ok := s.failed.Load(name); ok && v.(uint64) <= before && s.failed.CompareAndDelete(name, v) {
			s.nfailed.Add(-1)
		}
	case !errors.Is(err, driver.ErrConflict):
		if _, loaded := s.failed.Swap(name, s.failures.Add(1)); !loaded {
			s.nfailed.Add(1)
		}
		if m := s.m.Load(); m != nil {
			m.drop()
		}
	}
	return err
}

// retryWrite is the load of a circuit whose last write failed: it writes a
// temporary file under the circuit's lock with a checked index, which
// makes every step of a record write but the rename, and removes it. Only
// when that succeeds does the load go on.
func (s *Store) retryWrite(ctx context.Context, name string) error {
	err := s.changed(ctx, name, func(counter) error { return s.trial(name) })
	if err != nil {
		return fmt.Errorf("a write of this circuit failed, and no call is admitted until one succeeds: %w", err)
	}
	return nil
}
