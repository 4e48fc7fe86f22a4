package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// Store is a circuit.Store over one directory. It is safe for concurrent
// use; processes that open the same directory share every circuit in it.
type Store struct {
	dir string

	entries sync.Map // circuit name → *entry

	idxMu  sync.Mutex
	idx    atomic.Pointer[index]
	idxBad atomic.Bool // the index exists but cannot be used: read files

	wall  func() time.Time // the wall clock, for anchoring the boot clock
	clkMu sync.Mutex
	clk   atomic.Pointer[clockState]
}

// Option configures a Store.
type Option func(*Store)

// WithWallClock replaces the wall clock the store anchors its boot clock to.
// It is meant for tests that step the wall clock: deadlines follow the boot
// clock and do not move with it.
func WithWallClock(now func() time.Time) Option { return func(s *Store) { s.wall = now } }

// entry is what the store knows of one circuit.
type entry struct {
	s                  *Store
	name               string
	key                string
	tag                uint64
	recordPath, lockTo string

	slot  atomic.Pointer[slot]  // its slot in the change index, once found
	fast  atomic.Pointer[known] // the record as of an even change counter
	swept atomic.Bool           // this process swept the circuit's temporary files

	mu   sync.Mutex
	file held // the record file last read or written
}

// known is a record (nil: none) as of change counter seq.
type known struct {
	seq uint64
	rec *circuit.Record
}

// held is a decoded record and the file it came from.
//
// The file is held open: while it is, its inode cannot be freed and reused
// by another record file, so a file with the same inode (and size and
// modification time) is this one. Records are never changed in place, only
// replaced by rename, so the same file means the same record.
type held struct {
	file       *os.File
	ino, size  uint64
	mtimeNanos int64
	rec        *circuit.Record
}

func (h held) same(st *syscall.Stat_t) bool {
	return h.file != nil && h.ino == st.Ino && h.size == uint64(st.Size) && h.mtimeNanos == st.Mtim.Nano()
}

var (
	_ circuit.Store  = (*Store)(nil)
	_ circuit.Binder = (*Store)(nil)
	_ circuit.Clock  = (*Store)(nil)
)

// Open returns a store over dir. It creates nothing and does no I/O: the
// directory is created, 0700, on the first write.
func Open(dir string, opts ...Option) (*Store, error) {
	if dir == "" {
		return nil, errors.New("filestore: empty directory path")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	s := &Store{dir: abs, wall: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Dir returns the store's directory, as an absolute path.
func (s *Store) Dir() string { return s.dir }

// entry returns the store's entry for the circuit name.
func (s *Store) entry(name string) *entry {
	if e, ok := s.entries.Load(name); ok {
		return e.(*entry)
	}
	sum := sha256.Sum256([]byte(name))
	key := hex.EncodeToString(sum[:])
	e := &entry{
		s:          s,
		name:       name,
		key:        key,
		tag:        tagOf(sum),
		recordPath: filepath.Join(s.dir, key+".json"),
		lockTo:     filepath.Join(s.dir, key+".lock"),
	}
	actual, _ := s.entries.LoadOrStore(name, e)
	return actual.(*entry)
}

// Bind returns the circuit name of the store, resolved once: its key, its
// files and its slot in the change index.
func (s *Store) Bind(name string) circuit.BoundStore { return s.entry(name) }

// Load returns the circuit's record, or nil when it has none. Its time is
// the zero Time: the Breaker reads the store's clock (Now) only when a
// decision needs it. While the change index shows the record unchanged
// since this process last read it, Load makes no system call.
func (s *Store) Load(ctx context.Context, name string) (*circuit.Record, time.Time, error) {
	return s.entry(name).Load(ctx)
}

// Load is Store.Load for the bound circuit.
func (e *entry) Load(context.Context) (*circuit.Record, time.Time, error) {
	if sl := e.slot.Load(); sl != nil {
		if k := e.fast.Load(); k != nil && k.seq == sl.ctr.Load() {
			return k.rec, time.Time{}, nil
		}
	}
	rec, err := e.s.loadSlow(e, e.name)
	return rec, time.Time{}, err
}

// loadSlow reads the record from its file, and remembers it as of the
// change counter when the counter was even and unchanged across the read.
func (s *Store) loadSlow(e *entry, name string) (*circuit.Record, error) {
	sl := s.slotFor(e, false)
	var before uint64
	if sl != nil {
		before = sl.ctr.Load()
	}
	rec, err := s.read(e, name)
	if err != nil {
		return nil, err
	}
	if sl != nil && before&1 == 0 && sl.ctr.Load() == before {
		e.fast.Store(&known{seq: before, rec: rec})
	}
	return rec, nil
}

// read reads the record without a lock, reusing the decoded record while
// its file is unchanged.
func (s *Store) read(e *entry, name string) (*circuit.Record, error) {
	if err := fault("read", "lstat", e.recordPath); err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(e.recordPath, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			if err := s.checkDir(false); err != nil && !errors.Is(err, errNoDir) {
				return nil, err
			}
			return nil, nil
		}
		return nil, &fs.PathError{Op: "lstat", Path: e.recordPath, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, fmt.Errorf("record %s is not a regular file (a symlink?): refused", e.recordPath)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.file.same(&st) {
		return e.file.rec, nil
	}
	if err := s.checkDir(false); err != nil {
		return nil, err
	}
	f, rec, st2, err := readRecord(e.recordPath)
	if err != nil || rec == nil {
		return nil, err
	}
	if rec.Name != name {
		_ = f.Close()
		return nil, fmt.Errorf("record %s: %w: it holds circuit %q", e.recordPath, circuit.ErrCorrupt, rec.Name)
	}
	e.hold(held{file: f, ino: st2.Ino, size: uint64(st2.Size), mtimeNanos: st2.Mtim.Nano(), rec: rec})
	return rec, nil
}

// hold remembers h as the entry's record file, closing the one it replaces.
// The caller holds e.mu.
func (e *entry) hold(h held) {
	if e.file.file != nil && e.file.file != h.file {
		_ = e.file.file.Close()
	}
	e.file = h
}

// readRecord opens, stats and decodes the record at path, and returns it
// with its still open file; all nil when absent.
func readRecord(path string) (_ *os.File, _ *circuit.Record, _ *syscall.Stat_t, err error) {
	// O_NONBLOCK: opening a FIFO planted as a record must not wait for a
	// writer; Fstat below refuses it. It changes nothing for regular files.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, nil
		}
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, nil, fmt.Errorf("record %s is a symlink: refused", path)
		}
		return nil, nil, nil, fmt.Errorf("open record: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil, nil, nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, nil, nil, fmt.Errorf("record %s is not a regular file: refused", path)
	}
	data := make([]byte, st.Size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, nil, fmt.Errorf("read record %s: %w", path, err)
	}
	rec, err := decode(data)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("record %s: %w: %v", path, circuit.ErrCorrupt, err)
	}
	if circuit.Key(rec.Name)+".json" != filepath.Base(path) {
		return nil, nil, nil, fmt.Errorf("record %s: %w: it holds circuit %q", path, circuit.ErrCorrupt, rec.Name)
	}
	return f, rec, &st, nil
}

// Replace stores next as the circuit's record if the stored one is still
// prev, under the circuit's lock.
func (s *Store) Replace(ctx context.Context, name string, prev, next *circuit.Record) error {
	return s.entry(name).Replace(ctx, prev, next)
}

// Replace is Store.Replace for the bound circuit.
func (e *entry) Replace(ctx context.Context, prev, next *circuit.Record) error {
	s, name := e.s, e.name
	if next == nil || next.Name != name {
		return fmt.Errorf("replace %q: the new record must be that circuit's", name)
	}
	if err := next.Check(); err != nil {
		return fmt.Errorf("replace %q: refusing to write an inconsistent record: %w", name, err)
	}
	if err := s.checkDir(true); err != nil {
		return err
	}
	if st := s.clk.Load(); st == nil || !st.persist {
		s.syncClock(true) // anchor this boot's clock in the directory
	}
	return s.locked(ctx, e, func() error {
		cur, err := s.read(e, name)
		if err != nil {
			return err
		}
		if !circuit.SameRevision(cur, prev) {
			return circuit.ErrConflict
		}
		data, err := encode(next)
		if err != nil {
			return fmt.Errorf("encode record: %w", err)
		}
		sl := s.slotFor(e, true)
		var seq uint64
		// Temporary files of a writer that died are swept by the next: the
		// first write of each circuit in a process, and any write that finds
		// a change left half-way in the index.
		sweep := sl == nil || !e.swept.Load()
		if sl != nil {
			var interrupted bool
			seq, interrupted = sl.begin()
			sweep = sweep || interrupted
		}
		if sweep {
			s.sweep(e.key)
			e.swept.Store(true)
		}
		f, st, err := s.write(e, data)
		e.mu.Lock()
		if err != nil {
			e.hold(held{})
		} else {
			e.hold(held{file: f, ino: st.Ino, size: uint64(st.Size), mtimeNanos: st.Mtim.Nano(), rec: next})
		}
		e.mu.Unlock()
		if sl != nil {
			sl.end(seq)
			if err == nil {
				e.fast.Store(&known{seq: seq + 1, rec: next})
			}
		}
		return err
	})
}

// Delete removes the circuit's record, even a corrupt one, under its lock.
// The lock file stays: deleting it would let two processes hold "the" lock
// on different inodes.
func (s *Store) Delete(ctx context.Context, name string) error {
	return s.entry(name).Delete(ctx)
}

// Delete is Store.Delete for the bound circuit.
func (e *entry) Delete(ctx context.Context) error {
	s := e.s
	if err := s.checkDir(false); err != nil {
		if errors.Is(err, errNoDir) {
			return nil
		}
		return err
	}
	return s.locked(ctx, e, func() error {
		sl := s.slotFor(e, true)
		var seq uint64
		if sl != nil {
			seq, _ = sl.begin()
		}
		err := fault("remove", "remove", e.recordPath)
		if err == nil {
			err = os.Remove(e.recordPath)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("remove record: %w", err)
		} else {
			s.sweep(e.key)
			err = s.syncDir()
		}
		e.mu.Lock()
		e.hold(held{})
		e.mu.Unlock()
		if sl != nil {
			sl.end(seq)
		}
		return err
	})
}

// slotFor returns the circuit's slot in the change index, or nil when it
// has none. With claim (writers, under the circuit's lock), the index is
// created and a slot claimed when needed.
func (s *Store) slotFor(e *entry, claim bool) *slot {
	if sl := e.slot.Load(); sl != nil {
		return sl
	}
	x := s.index(claim)
	if x == nil {
		return nil
	}
	sl := x.find(e.tag, claim)
	if sl != nil {
		e.slot.Store(sl)
	}
	return sl
}

// index returns the mapped change index, mapping it when it exists (or,
// with create, creating it first); nil when there is none or it is unusable.
func (s *Store) index(create bool) *index {
	if x := s.idx.Load(); x != nil || s.idxBad.Load() {
		return x
	}
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if x := s.idx.Load(); x != nil {
		return x
	}
	x, err := openIndex(s.dir, create)
	if err != nil {
		s.idxBad.Store(true) // correct without it: every read goes to the file
		return nil
	}
	if x != nil {
		s.idx.Store(x)
	}
	return x
}
