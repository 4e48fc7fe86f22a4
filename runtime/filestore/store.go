package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// Store is a circuit.Store over one directory. It is safe for concurrent
// use; processes that open the same directory share every circuit in it.
type Store struct {
	dir string

	mu    sync.RWMutex
	cache map[string]cached // by key: the last record read or written
}

// cached is a decoded record and the identity of the file it came from.
//
// The file is held open: while it is, its inode cannot be freed and reused
// by another record file, so a file with the same inode (and size and
// modification time) is this one. Records are never changed in place, only
// replaced by rename, so the same file means the same record.
type cached struct {
	file       *os.File
	ino, size  uint64
	mtimeNanos int64
	rec        *circuit.Record
}

func identity(f *os.File, st *syscall.Stat_t, rec *circuit.Record) cached {
	return cached{file: f, ino: st.Ino, size: uint64(st.Size), mtimeNanos: st.Mtim.Nano(), rec: rec}
}

// remember caches c for key, closing the file of the entry it replaces.
func (s *Store) remember(key string, c cached) {
	s.mu.Lock()
	old, ok := s.cache[key]
	s.cache[key] = c
	s.mu.Unlock()
	if ok && old.file != nil && old.file != c.file {
		_ = old.file.Close()
	}
}

// forget drops key's cache entry.
func (s *Store) forget(key string) {
	s.mu.Lock()
	old, ok := s.cache[key]
	delete(s.cache, key)
	s.mu.Unlock()
	if ok && old.file != nil {
		_ = old.file.Close()
	}
}

var _ circuit.Store = (*Store)(nil)

// Open returns a store over dir. It creates nothing and does no I/O: the
// directory is created, 0700, on the first write.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("filestore: empty directory path")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	return &Store{dir: abs, cache: make(map[string]cached)}, nil
}

// Dir returns the store's directory, as an absolute path.
func (s *Store) Dir() string { return s.dir }

func (s *Store) recordPath(key string) string { return filepath.Join(s.dir, key+".json") }

func (s *Store) lockPath(key string) string { return filepath.Join(s.dir, key+".lock") }

// Load returns the circuit's record, or nil when it has none, and the wall
// clock's time.
func (s *Store) Load(ctx context.Context, name string) (*circuit.Record, time.Time, error) {
	rec, err := s.load(circuit.Key(name), name)
	return rec, time.Now(), err
}

// load reads the record for key without a lock, reusing the decoded record
// while its file is unchanged.
func (s *Store) load(key, name string) (*circuit.Record, error) {
	path := s.recordPath(key)
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			if err := s.checkDir(false); err != nil && !errors.Is(err, errNoDir) {
				return nil, err
			}
			return nil, nil
		}
		return nil, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, fmt.Errorf("record %s is not a regular file (a symlink?): refused", path)
	}
	s.mu.RLock()
	c, ok := s.cache[key]
	s.mu.RUnlock()
	if ok && c.ino == st.Ino && c.size == uint64(st.Size) && c.mtimeNanos == st.Mtim.Nano() {
		return c.rec, nil
	}
	if err := s.checkDir(false); err != nil {
		return nil, err
	}
	f, rec, st2, err := readRecord(path)
	if err != nil || rec == nil {
		return nil, err
	}
	if rec.Name != name || circuit.Key(rec.Name) != key {
		_ = f.Close()
		return nil, fmt.Errorf("record %s: %w: it holds circuit %q", path, circuit.ErrCorrupt, rec.Name)
	}
	s.remember(key, identity(f, st2, rec))
	return rec, nil
}

// readRecord opens, stats and decodes the record at path, and returns it
// with its still open file; all nil when absent.
func readRecord(path string) (_ *os.File, _ *circuit.Record, _ *syscall.Stat_t, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
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
	return f, rec, &st, nil
}

// Replace stores next as the circuit's record if the stored one is still
// prev, under the circuit's lock.
func (s *Store) Replace(ctx context.Context, name string, prev, next *circuit.Record) error {
	key := circuit.Key(name)
	if err := s.checkDir(true); err != nil {
		return err
	}
	return s.locked(ctx, key, func() error {
		cur, err := s.load(key, name)
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
		f, st, err := s.write(key, data)
		if err != nil {
			s.forget(key)
			return err
		}
		s.remember(key, identity(f, st, next))
		return nil
	})
}

// Delete removes the circuit's record, even a corrupt one, under its lock.
// The lock file stays: deleting it would let two processes hold "the" lock
// on different inodes.
func (s *Store) Delete(ctx context.Context, name string) error {
	key := circuit.Key(name)
	if err := s.checkDir(false); err != nil {
		if errors.Is(err, errNoDir) {
			return nil
		}
		return err
	}
	return s.locked(ctx, key, func() error {
		s.forget(key)
		path := s.recordPath(key)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove record: %w", err)
		}
		s.sweep(key)
		return s.syncDir()
	})
}

// Names returns the names of every circuit with a record in the store, for
// operators' tools; file names are hashes, so it reads each record. A
// corrupt record is an error naming its file.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	if err := s.checkDir(false); err != nil {
		if errors.Is(err, errNoDir) {
			return nil, nil
		}
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(s.dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, rec, _, err := readRecord(p)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			_ = f.Close()
			if circuit.Key(rec.Name)+".json" != filepath.Base(p) {
				return nil, fmt.Errorf("record %s: %w: it holds circuit %q", p, circuit.ErrCorrupt, rec.Name)
			}
			names = append(names, rec.Name)
		}
	}
	return names, nil
}
