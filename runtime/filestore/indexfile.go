package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// How a process finds, checks, creates and repairs the change index file.
//
// A process uses its mapping without looking at the file until recheck has
// passed since it last checked it: a ticker then marks the mapping due, and
// the next call that uses it checks it, with one lstat, before going on;
// every write and every read of a record file checks it too. The check: the
// index file is still the one mapped (same device and inode, whole) and its
// header still holds the anchor this process validated; a mapping that
// fails it, or faults, is retired, every copy of a record read under it is
// dropped with it, and the file is mapped anew. And its status change time
// is the one seen at the last check: a write to the file other than through
// a mapping (an index restored in place from a copy) moves it, and no one
// can set it back; when it moved, every copy taken under the mapping is
// dropped (mapping.trust), and the mapping kept. So a removed, replaced,
// restored or truncated index, or a state directory removed or moved aside
// and made anew, is seen by readers within recheck of their last check (and
// the ticker's delay), by writers at once.
//
// A missing index is created by the first writer; a damaged one (truncated,
// of another size or format, a FIFO, a symlink) is replaced by the first
// call that finds it, which fails closed with the damage as its error. Both
// happen under the directory-wide lock index.lock, and take their anchor as
// clock.go says.

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

// need is what a caller of current needs from the index.
type need int

const (
	needPeek  need = iota // a usable index if there is one: the clock
	needRead              // the same, replacing a damaged index
	needIndex             // the same, checked against the file whatever its age, and created (with the directory) if missing: Load's slow path
	needWrite             // a checked, anchored index, created if missing: writers
)

// errForged is the damage of an index whose header's anchor does not match
// its check word: changed in place by another actor.
func errForged(path string) error {
	return &damagedError{path, "its clock anchor was changed in place (it does not match the header's check word)"}
}

// indexMagicWord is indexMagic as the header's first word.
var indexMagicWord = binary.NativeEndian.Uint64([]byte(indexMagic))

// current returns the directory's index, mapped, or nil when there is none
// and n is below needIndex. With needWrite the mapping is checked against the
// file whatever its age: a writer must bump the counter every reader of the
// directory watches.
func (s *Store) current(ctx context.Context, n need) (*mapping, error) {
	force := n >= needIndex
	if m := s.m.Load(); m != nil && !force && m.fresh() {
		return m, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.m.Load()
	if m != nil && !force && m.fresh() {
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
		m, err = mapIndex(s.indexPath())
		if err == nil {
			s.learnKeep(m)
		}
		if err == nil && s.anchorLater(m) {
			unmap(m.data)
			m, err = nil, &damagedError{s.indexPath(), "its clock anchor changed to a later one than this process validated"}
		}
		if err == nil && m.forged() {
			unmap(m.data)
			m, err = nil, errForged(s.indexPath())
		}
		var dmg *damagedError
		switch {
		case err == nil:
		case errors.Is(err, errNoIndex) && n < needIndex:
			return nil, nil
		case errors.Is(err, errNoIndex), errors.As(err, &dmg) && n != needPeek:
			if dmg != nil {
				cause = dmg
			}
			if err := s.checkDir(true); err != nil { // Load's slow path may come first
				return nil, err
			}
			if m, err = s.makeIndex(ctx); err != nil {
				if dmg != nil {
					return nil, fmt.Errorf("%w; replacing it failed: %v", dmg, err)
				}
				return nil, err
			}
		default:
			return nil, err
		}
		s.adopt(m)
		s.m.Store(m)
		s.followKeep(ctx, m)
	}
	if n == needWrite && !m.anchored.Load() {
		if err := s.anchorIndex(ctx, m); err != nil {
			return nil, err
		}
	}
	if !m.trusted(moved) {
		return nil, fmt.Errorf("change index %s faulted: truncated under this process?", s.indexPath())
	}
	s.arm()
	if cause != nil {
		return m, fmt.Errorf("%w: replaced it with a new one; this call fails closed", cause)
	}
	return m, nil
}

func (s *Store) indexPath() string { return filepath.Join(s.dir, indexName) }

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

// verify reports whether m still maps the directory's index, whole, with
// the anchor this process validated, and whether its change time moved
// since the last check: it was written to other than through a mapping (an
// index restored in place from a copy), or its pages written back (a disk
// file system): the copies taken under m are then to be dropped. It adopts
// an anchor another process gave the index meanwhile. The caller holds s.mu.
func (s *Store) verify(m *mapping) (moved bool, err error) {
	if m.trust.Load() == trustRetired {
		return false, errors.New("retired")
	}
	fi, err := os.Lstat(s.indexPath())
	if err != nil {
		return false, err
	}
	if id := identify(fi); id.dev != m.id.dev || id.ino != m.id.ino || fi.Size() != indexSize {
		return false, errors.New("replaced or resized")
	}
	if ct := changeTime(fi); ct != m.ctime {
		m.ctime, moved = ct, true
	}
	magic, boot, anchor := m.load(0), m.load(hdrBoot), m.load(hdrAnchor)
	switch {
	case magic != indexMagicWord:
		return false, errors.New("damaged")
	case m.anchored.Load() && (boot != m.boot || int64(anchor) != m.anchor), m.forged():
		return false, errors.New("anchor changed")
	}
	s.adopt(m)
	return moved, nil
}

// trusted marks m fresh after a check, counting a moved change time, and
// reports false when m was retired meanwhile.
func (m *mapping) trusted(moved bool) bool {
	for {
		t := m.trust.Load()
		if t == trustRetired {
			return false
		}
		n := t&^trustState | trustFresh
		if moved {
			n += trustMoved
		}
		if n == t || m.trust.CompareAndSwap(t, n) {
			return true
		}
	}
}

// drop makes every copy taken under m's trust stale, as a moved change
// time does, and leaves its state as it is.
func (m *mapping) drop() {
	for {
		t := m.trust.Load()
		if t == trustRetired || m.trust.CompareAndSwap(t, t+trustMoved) {
			return
		}
	}
}

// adopt takes the anchor in m's header when it is this boot's. The caller
// holds s.mu.
func (s *Store) adopt(m *mapping) {
	if m.anchored.Load() || m.forged() {
		return
	}
	boot, anchor := m.load(hdrBoot), m.load(hdrAnchor)
	if boot != 0 && boot == s.boot() {
		m.boot, m.anchor = boot, int64(anchor)
		if s.lastSet && s.last != m.anchor {
			s.anchorMoved.Store(s.mono()) // decisions in flight are checked (decidedBy)
		}
		s.last, s.lastSet = m.anchor, true
		m.anchored.Store(true)
	}
}

// mapIndex maps the index file at path: errNoIndex when there is none, a
// *damagedError when it is not a usable index.
func mapIndex(path string) (*mapping, error) {
	if err := fault("index", "open", path); err != nil {
		return nil, fmt.Errorf("open change index: %w", err)
	}
	return mapFile(path)
}

// mapFile is mapIndex without the fault seam.
func mapFile(path string) (*mapping, error) {
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

// followKeep makes index.keep a second name of m's file when it names
// another, so that it always names the index in use (an index replaced by
// hand with an earlier anchor, taken, included) and never puts back or
// teaches an older one. The caller holds s.mu.
func (s *Store) followKeep(ctx context.Context, m *mapping) {
	keep := filepath.Join(s.dir, indexKeepName)
	if fi, err := os.Lstat(keep); err == nil {
		if id := identify(fi); id.dev == m.id.dev && id.ino == m.id.ino {
			return
		}
	}
	unlock, err := s.lockIndex(ctx)
	if err != nil {
		return
	}
	defer unlock()
	if fi, err := os.Lstat(s.indexPath()); err != nil || identify(fi) != m.id {
		return
	}
	_ = os.Remove(keep)
	_ = os.Link(s.indexPath(), keep)
}

// learnKeep takes the anchor of index.keep, the index file's second name,
// as the one this process validated, when it names another file than m
// (the index was replaced) holding this boot's anchor, earlier than any this
// process knew: an index renamed over the first name with a later anchor is
// then replaced (anchorLater), even by a process that never mapped the
// earlier one. The caller holds s.mu.
func (s *Store) learnKeep(m *mapping) {
	keep := filepath.Join(s.dir, indexKeepName)
	fi, err := os.Lstat(keep)
	if err != nil {
		return
	}
	if id := identify(fi); id.dev == m.id.dev && id.ino == m.id.ino {
		return
	}
	k, err := mapFile(keep)
	if err != nil {
		return
	}
	defer unmap(k.data)
	if k.forged() {
		return
	}
	boot, anchor := k.load(hdrBoot), k.load(hdrAnchor)
	if boot == s.boot() && (!s.lastSet || int64(anchor) < s.last) {
		s.last, s.lastSet = int64(anchor), true
	}
}

// anchorLater reports whether m's header holds a later anchor for this
// boot than the one this process validated: a header changed in place, or
// an index replaced by one with another anchor. A later anchor would make
// every deadline recorded under the earlier one end early, so such an index
// is replaced, with the anchor this process validated; an earlier one is
// taken (deadlines end late, never early). Processes so converge on the
// earliest anchor any of them validated. The caller holds s.mu.
func (s *Store) anchorLater(m *mapping) bool {
	if !s.lastSet {
		return false
	}
	boot, anchor := m.load(hdrBoot), m.load(hdrAnchor)
	return boot == s.boot() && int64(anchor) > s.last
}

// makeIndex creates the index, or replaces a damaged one (or one with a
// later anchor, see anchorLater), under the directory-wide lock, unless
// another process did first. The caller holds s.mu.
func (s *Store) makeIndex(ctx context.Context) (*mapping, error) {
	unlock, err := s.lockIndex(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	path := s.indexPath()
	m, err := mapIndex(path)
	if err == nil && s.anchorLater(m) {
		s.restoreAnchor(m)
		unmap(m.data)
		m, err = nil, &damagedError{path, "its clock anchor is later than this process validated"}
	}
	if err == nil && m.forged() {
		unmap(m.data)
		m, err = nil, errForged(path)
	}
	var dmg *damagedError
	if err == nil || !errors.Is(err, errNoIndex) && !errors.As(err, &dmg) {
		return m, err // made meanwhile, or an error a new index cannot cure
	}
	keep := filepath.Join(s.dir, indexKeepName)
	if _, serr := os.Lstat(keep); serr == nil && dmg == nil { // removed: put back the file every process still maps, if whole
		if k, kerr := mapFile(keep); kerr == nil && !s.anchorLater(k) && !k.forged() {
			unmap(k.data)
			if err := os.Link(keep, path); err == nil || errors.Is(err, fs.ErrExist) {
				return mapIndex(path)
			}
		} else if kerr == nil {
			unmap(k.data)
		}
	}
	tmp, err := writeWhole(s.dir, ".index-*", newIndex(s.boot(), s.chooseAnchor(true)))
	if err != nil {
		return nil, fmt.Errorf("create change index: %w", err)
	}
	defer os.Remove(tmp)
	if dmg == nil {
		err = os.Link(tmp, path)
	} else {
		poison(path)
		err = os.Rename(tmp, path)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create change index: %w", err)
	}
	// The second name keeps the file alive and findable if the first is
	// removed by hand. A file it still names is one not put back (damaged,
	// or with a later anchor): processes may still map it, and drop their
	// copies at once when it is marked.
	if fi, err := os.Lstat(keep); err == nil {
		if pfi, err := os.Lstat(path); err != nil || identify(fi) != identify(pfi) {
			poison(keep)
		}
	}
	_ = os.Remove(keep)
	_ = os.Link(path, keep)
	return mapIndex(path)
}

// restoreAnchor puts the anchor this process validated back in the header
// of m, which holds a later one (anchorLater), before the index is
// replaced: a new index may not fit (a full file system), and a process
// that never validated an anchor takes the header's, which would end every
// recorded deadline early. The caller holds the directory-wide lock.
func (s *Store) restoreAnchor(m *mapping) {
	if a := m.load(hdrAnchor); int64(a) > s.last {
		if m.word(hdrAnchor).CompareAndSwap(a, uint64(s.last)) {
			m.store(hdrCheck, anchorCheck(m.load(hdrBoot), uint64(s.last)))
		}
	}
}

// poison makes every process that still maps the index file at path, about
// to be replaced, drop its copies at their next use: every counter is
// marked as changing, and its magic cleared, so that no process maps it
// again. A file not of the index's size, or with holes, was cut by another
// actor (outside the model: a process touching a cut part dies of SIGBUS;
// marking a hole on a full file system would too), and is left as it is:
// processes drop their copies at their recheck. The caller holds the
// directory-wide lock.
func poison(path string) {
	f, err := os.OpenFile(path, os.O_RDWR|oNoFollow|oNonBlock, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != indexSize || sparse(fi) || checkOwner("change index", path, fi) != nil {
		return
	}
	data, err := mapShared(f, indexSize)
	if err != nil {
		return
	}
	defer unmap(data)
	markAll(&mapping{data: data})
}

// markAll marks every counter of the index m maps as changing and clears
// its magic.
func markAll(m *mapping) {
	for i := range slotCount {
		off := slotsOffset + i*slotSize + 8
		m.store(off, (m.load(off)|1)+2)
	}
	for i := range spillCount {
		m.word(spillOffset + i*8).Add(spillBegin)
	}
	m.store(0, 0)
}

// anchorIndex gives m's header this boot's anchor, under the directory-wide
// lock, unless another process did first. The caller holds s.mu.
func (s *Store) anchorIndex(ctx context.Context, m *mapping) error {
	unlock, err := s.lockIndex(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if s.adopt(m); m.anchored.Load() {
		return nil
	}
	// The header is another boot's: records were written under that boot's
	// anchor and keep their wall-clock meaning; this boot gets its own.
	a := s.chooseAnchor(false)
	m.store(hdrAnchor, uint64(a))
	m.store(hdrCheck, anchorCheck(s.boot(), uint64(a)))
	m.store(hdrBoot, s.boot())
	s.adopt(m)
	if !m.anchored.Load() {
		return fmt.Errorf("change index %s: could not anchor this boot's clock", s.indexPath())
	}
	return nil
}

// lockIndex takes the directory-wide lock under which the index is created,
// replaced and anchored.
func (s *Store) lockIndex(ctx context.Context) (unlock func(), err error) {
	fl, err := lockFile(ctx, filepath.Join(s.dir, indexLockName))
	if err != nil {
		return nil, err
	}
	return func() { _ = fl.Close() }, nil
}
