package filestore

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// stepHook, when set (by tests only), is called after each step of a write
// with the step's name: "create", "write", "fsync", "close", "rename",
// "dirsync". Crash tests stop a writer there and kill it.
var stepHook func(step string)

func step(name string) {
	if stepHook != nil {
		stepHook(name)
	}
}

// write durably replaces the record for key with data: a private temporary
// file in the directory is written, fsynced, closed and renamed over the
// record, and the directory is fsynced. The caller holds the lock. It returns
// the new record file, open for reading, and its identity.
func (s *Store) write(e *entry, data []byte) (*os.File, *syscall.Stat_t, error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := e.recordPath + ".tmp-" + hex.EncodeToString(rnd[:])
	var f *os.File
	err := fault("create", "open", tmp)
	if err == nil {
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("create temporary record: %w", err)
	}
	step("create")
	st, err := writeSync(f, data)
	var held *os.File
	if err == nil {
		// Held open by the cache, so that its inode stays this record's.
		if err = fault("reopen", "open", tmp); err == nil {
			held, err = os.OpenFile(tmp, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		}
	}
	cerr := fault("close", "close", tmp)
	if err := f.Close(); cerr == nil {
		cerr = err
	}
	if err == nil && cerr != nil {
		err = fmt.Errorf("close temporary record: %w", cerr)
	}
	fail := func(err error) (*os.File, *syscall.Stat_t, error) {
		if held != nil {
			_ = held.Close()
		}
		_ = os.Remove(tmp)
		return nil, nil, err
	}
	if err != nil {
		return fail(err)
	}
	step("close")
	err = fault("rename", "rename", tmp)
	if err == nil {
		err = os.Rename(tmp, e.recordPath)
	}
	if err != nil {
		return fail(fmt.Errorf("rename record: %w", err))
	}
	step("rename")
	if err := s.syncDir(); err != nil {
		_ = held.Close()
		return nil, nil, err // the record is replaced but may not survive a crash
	}
	step("dirsync")
	return held, st, nil
}

// writeSync writes data to f, sets 0600 whatever the umask, fsyncs, and
// returns f's identity.
func writeSync(f *os.File, data []byte) (*syscall.Stat_t, error) {
	err := fault("chmod", "chmod", f.Name())
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err != nil {
		return nil, fmt.Errorf("chmod temporary record: %w", err)
	}
	if err = fault("write", "write", f.Name()); err == nil {
		_, err = f.Write(data)
	}
	if err != nil {
		return nil, fmt.Errorf("write temporary record: %w", err)
	}
	step("write")
	if err = fault("fsync", "sync", f.Name()); err == nil {
		err = f.Sync()
	}
	if err != nil { // never retried: the page cache may have dropped the data
		return nil, fmt.Errorf("fsync temporary record: %w", err)
	}
	step("fsync")
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("fstat temporary record: %w", err)
	}
	return &st, nil
}

// sweep removes temporary records left for key by writers that crashed. The
// caller holds the lock, so no live writer owns one.
func (s *Store) sweep(key string) {
	leftovers, _ := filepath.Glob(filepath.Join(s.dir, key+".json.tmp-*"))
	for _, p := range leftovers {
		_ = os.Remove(p)
	}
}
