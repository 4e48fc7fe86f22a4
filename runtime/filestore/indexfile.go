package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// How a process finds, checks, creates and repairs the change index file.
//
// A process uses its mapping without looking at the file until recheck has
// passed since it last checked it: a ticker then marks the mapping due, and
// the next call that uses it checks it, with one lstat, before going on;
// every write checks it too. The check: the index file is still the one
// mapped (same device and inode, whole, its magic in place); a mapping that
// fails it is retired, every Watch of a record read under it fails with it,
// and the file is mapped anew. And its status change time is the one seen
// at the last check: a write to the file other than through a mapping (an
// index restored in place from a copy) moves it, and no one can set it
// back; when it moved, every Watch taken under the mapping fails
// (mapping.trust), and the mapping is kept. So an index removed, replaced
// or restored by another actor, or a state directory moved aside and made
// anew, is seen by readers within recheck of their last check (and the
// ticker's delay), by writers at once.
//
// A missing index is created by the first Load; a damaged one (of another
// size or format, a FIFO, a symlink) is replaced by the first call that
// finds it, which fails closed with the damage as its error. Both happen
// under the directory-wide lock index.lock.

// recheck bounds how long a process uses its mapping of the index without
// checking that it is still the directory's index file.
const recheck = time.Second

// errNoIndex reports that the state directory has no index file.
var errNoIndex = errors.New("no change index")

// damagedError reports an index file that exists but cannot be used.
type damagedError struct{ path, why string }

func (e *damagedError) Error() string {
	return fmt.Sprintf("change index %s is damaged (%s)", e.path, e.why)
}

// indexMagicWord is indexMagic as the header's first word.
var indexMagicWord = binary.NativeEndian.Uint64([]byte(indexMagic))

// current returns the directory's index, mapped and anchored for this
// boot, creating it (with the directory) when there is none. For a write it
// is checked against the file whatever its age: a writer must bump the
// counter every reader of the directory watches.
func (s *Store) current(ctx context.Context, write bool) (*mapping, error) {
	if m := s.m.Load(); m != nil && !write && m.fresh() {
		return m, nil
	}
	select {
	case s.mu <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("change index: %w", ctx.Err())
	}
	defer func() { <-s.mu }()
	m := s.m.Load()
	if m != nil && !write && m.fresh() {
		return m, nil
	}
	moved := false
	if m != nil {
		var err error
		if moved, err = s.verify(m); err != nil {
			m.release()
			s.m.Store(nil)
			m = nil
		}
	}
	var cause error
	if m == nil {
		var err error
		if m, err = mapIndex(s.path(indexName)); err != nil {
			var dmg *damagedError
			if !errors.Is(err, errNoIndex) && !errors.As(err, &dmg) {
				return nil, err
			}
			if dmg != nil {
				cause = dmg
			}
			if m, err = s.makeIndex(ctx); err != nil {
				if dmg != nil {
					return nil, fmt.Errorf("%w; replacing it failed: %v", dmg, err)
				}
				return nil, err
			}
		}
		s.m.Store(m)
	}
	if err := s.anchorIndex(ctx, m); err != nil {
		return nil, err
	}
	m.trusted(moved)
	s.arm()
	if cause != nil {
		return m, fmt.Errorf("%w: replaced it with a new one; this call fails closed", cause)
	}
	return m, nil
}

// The recheck's ticker runs while the store is used: every recheck it
// marks the mapping due, as long as a check made it fresh again since the
// last tick; a tick that finds it still due (no call checked it: the store
// is idle) stops the ticker, and the next check starts another. A busy
// store so never sets a timer from a call (setting one can wake the
// runtime's network poller with a write), and an idle one is not woken up.

// arm starts the store's ticker after a check, unless one runs. The caller
// holds s.mu.
func (s *Store) arm() {
	if s.armed.CompareAndSwap(false, true) {
		go s.ticks(time.NewTicker(recheck))
	}
}

// ticks marks the mapping due at every tick of t while the store is used.
func (s *Store) ticks(t *time.Ticker) {
	defer t.Stop()
	for range t.C {
		if !s.due() {
			return
		}
	}
}

// due marks the mapping due for its check (the next call that uses it
// checks the file first), and reports whether a check made it fresh since
// the last tick. When none did, the ticker is disarmed, unless a check
// made it fresh meanwhile: a check racing with due either starts another
// ticker or keeps this one.
func (s *Store) due() bool {
	for {
		m := s.m.Load()
		var t uint64
		if m != nil {
			t = m.trust.Load()
		}
		if t&trustState == trustFresh {
			if m.trust.CompareAndSwap(t, t&^trustState|trustDue) {
				return true
			}
			continue
		}
		s.armed.Store(false)
		if m = s.m.Load(); m == nil || m.trust.Load()&trustState != trustFresh || !s.armed.CompareAndSwap(false, true) {
			return false // idle, or a check started another ticker
		}
	}
}

// verify reports whether m still maps the directory's index, whole, and
// whether its change time moved since the last check: it was written to
// other than through a mapping, or its pages written back (a disk file
// system): the Watches taken under m are then to fail. The caller holds
// s.mu.
func (s *Store) verify(m *mapping) (moved bool, err error) {
	fi, err := os.Lstat(s.path(indexName))
	if err != nil {
		return false, err
	}
	if id := identify(fi); id.dev != m.id.dev || id.ino != m.id.ino || fi.Size() != indexSize {
		return false, errors.New("replaced or resized")
	}
	if m.load(0) != indexMagicWord {
		return false, errors.New("damaged")
	}
	if m.anchored.Load() && (m.load(hdrBoot) != m.boot || int64(m.load(hdrAnchor)) != m.anchor) {
		return false, errors.New("its clock anchor changed") // every process maps it anew, and takes it
	}
	if ct := changeTime(fi); ct != m.ctime {
		m.ctime, moved = ct, true
	}
	return moved, nil
}

// trusted marks m fresh after a check, counting a moved change time.
func (m *mapping) trusted(moved bool) {
	for {
		t := m.trust.Load()
		n := t&^trustState | trustFresh
		if moved {
			n += trustMoved
		}
		if n == t || m.trust.CompareAndSwap(t, n) {
			return
		}
	}
}

// drop makes every Watch taken under m's trust fail, as a moved change
// time does, and leaves its state as it is.
func (m *mapping) drop() {
	for {
		t := m.trust.Load()
		if t == trustRetired || m.trust.CompareAndSwap(t, t+trustMoved) {
			return
		}
	}
}

// mapIndex maps the index file at path: errNoIndex when there is none, a
// *damagedError when it is not a usable index.
func mapIndex(path string) (*mapping, error) {
	if err := fault("index", "open", path); err != nil {
		return nil, fmt.Errorf("open change index: %w", err)
	}
	// O_NONBLOCK: a FIFO planted as the index must not block the open.
	f, err := os.OpenFile(path, os.O_RDWR|oNoFollow|oNonBlock, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errNoIndex
	case errors.Is(err, syscall.ELOOP):
		return nil, &damagedError{path, "a symlink"}
	case errors.Is(err, syscall.EISDIR):
		return nil, &damagedError{path, "a directory"}
	case err != nil:
		return nil, fmt.Errorf("open change index: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat change index: %w", err)
	}
	if err := checkOwner("change index", path, fi); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &damagedError{path, "not a regular file"}
	}
	if fi.Size() != indexSize {
		return nil, &damagedError{path, fmt.Sprintf("%d bytes, want %d", fi.Size(), indexSize)}
	}
	data, err := mapShared(f, indexSize)
	if err != nil {
		return nil, fmt.Errorf("map change index: %w", err)
	}
	m := &mapping{data: data, id: identify(fi), ctime: changeTime(fi)}
	m.trust.Store(trustDue) // not retired; to be checked
	if m.load(0) != indexMagicWord {
		unmap(data)
		return nil, &damagedError{path, "unknown format"}
	}
	return m, nil
}

// makeIndex creates the index (and the directory), or replaces a damaged
// one, under the directory-wide lock, unless another process did first.
// The caller holds s.mu.
func (s *Store) makeIndex(ctx context.Context) (*mapping, error) {
	if err := s.checkDir(true); err != nil {
		return nil, err
	}
	unlock, err := s.lockIndex(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	path := s.path(indexName)
	m, err := mapIndex(path)
	var dmg *damagedError
	if err == nil || !errors.Is(err, errNoIndex) && !errors.As(err, &dmg) {
		return m, err // made meanwhile, or an error a new index cannot cure
	}
	boot, err := s.boot()
	if err != nil {
		return nil, err
	}
	tmp, err := writeWhole(s.dir, ".index-*", newIndex(boot, s.anchorNow()))
	if err != nil {
		return nil, fmt.Errorf("create change index: %w", err)
	}
	if dmg == nil {
		err = os.Link(tmp, path)
	} else {
		err = os.Rename(tmp, path)
	}
	_ = os.Remove(tmp) // before the mapping: the unlink moves the index's change time
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create change index: %w", err)
	}
	return mapIndex(path)
}

// anchorIndex takes m's anchor when its header holds this boot's, and
// otherwise gives it this boot's, under the directory-wide lock, unless
// another process did first. The caller holds s.mu.
func (s *Store) anchorIndex(ctx context.Context, m *mapping) error {
	if m.anchored.Load() {
		return nil
	}
	boot, err := s.boot()
	if err != nil {
		return fmt.Errorf("change index: %w", err)
	}
	if m.load(hdrBoot) != boot {
		// The header is another boot's: records were written under that
		// boot's anchor and keep their wall-clock meaning; this boot gets
		// its own.
		unlock, err := s.lockIndex(ctx)
		if err != nil {
			return err
		}
		defer unlock()
		if m.load(hdrBoot) != boot {
			m.word(hdrAnchor).Store(uint64(s.anchorNow()))
			m.word(hdrBoot).Store(boot)
		}
	}
	m.boot, m.anchor = boot, int64(m.load(hdrAnchor))
	m.anchored.Store(true)
	return nil
}

// lockIndex takes the directory-wide lock under which the index is created,
// replaced and anchored.
func (s *Store) lockIndex(ctx context.Context) (unlock func(), err error) {
	fl, err := lockFile(ctx, s.path(indexLockName))
	if err != nil {
		return nil, err
	}
	return func() { _ = fl.Close() }, nil
}
