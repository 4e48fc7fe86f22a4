package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// write durably replaces the circuit's record with data: a private
// temporary file in the directory is written, fsynced, closed and renamed
// over the record, and the directory is fsynced. The rename happens between
// the two marks of the circuit's counter c. The caller holds the lock. It
// returns the counter's value after the change.
func (s *Store) write(e *entry, c counter, data []byte) (uint64, error) {
	tmp, err := s.temp(e, data)
	if err != nil {
		return 0, err
	}
	seq, err := s.marked(c, func() error {
		err := fault("rename", "rename", tmp)
		if err == nil {
			err = os.Rename(tmp, e.recordPath())
		}
		if err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("rename record: %w", err)
		}
		step("rename")
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := s.syncDir(); err != nil {
		return 0, err // the record is replaced but may not survive a crash
	}
	step("dirsync")
	return seq, nil
}

// remove removes the circuit's record between the two marks of c. The
// caller holds the lock.
func (s *Store) remove(e *entry, c counter) error {
	_, err := s.marked(c, func() error {
		err := fault("remove", "remove", e.recordPath())
		if err == nil {
			err = os.Remove(e.recordPath())
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove record: %w", err)
		}
		_ = os.Remove(e.tempPath()) // a dead writer's, if any
		return nil
	})
	e.fast.Store(nil)
	if err != nil {
		return err
	}
	return s.syncDir()
}

// trial makes every step of a write but the rename: a temporary record is
// written, fsynced and removed, and the directory fsynced. The caller holds
// the lock.
func (s *Store) trial(e *entry) error {
	tmp, err := s.temp(e, []byte("{}\n"))
	if err != nil {
		return err
	}
	if err := os.Remove(tmp); err != nil {
		return fmt.Errorf("remove temporary record: %w", err)
	}
	return s.syncDir()
}

// marked runs change (a rename or removal of the record) between the two
// marks of the counter, and returns the counter's value after.
func (s *Store) marked(c counter, change func() error) (uint64, error) {
	seq, ok := c.begin()
	if !ok {
		return 0, errFaulted(c.m, s)
	}
	err := change()
	after, ok := c.end(seq)
	if !ok && err == nil {
		err = errFaulted(c.m, s)
	}
	return after, err
}

// temp writes data to a new private temporary record, fsynced and closed,
// and returns its path. The temporary record of a circuit always has the
// same name, <key>.json.tmp-next: the caller holds the circuit's lock, so
// one found in the way is a dead writer's (or planted), and is removed, not
// followed, before the exclusive create is tried again. No directory scan
// is ever needed to sweep leftovers.
func (s *Store) temp(e *entry, data []byte) (string, error) {
	tmp := e.tempPath()
	var f *os.File
	err := fault("create", "open", tmp)
	if err == nil {
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
		if errors.Is(err, fs.ErrExist) {
			if err = os.Remove(tmp); err == nil {
				f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("create temporary record: %w", err)
	}
	step("create")
	err = writeSync(f, data)
	cerr := fault("close", "close", tmp)
	if err := f.Close(); cerr == nil {
		cerr = err
	}
	if err == nil && cerr != nil {
		err = fmt.Errorf("close temporary record: %w", cerr)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	step("close")
	return tmp, nil
}

// writeSync writes data to f, sets 0600 whatever the umask, and fsyncs.
func writeSync(f *os.File, data []byte) error {
	err := fault("chmod", "chmod", f.Name())
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err != nil {
		return fmt.Errorf("chmod temporary record: %w", err)
	}
	if err = fault("write", "write", f.Name()); err == nil {
		_, err = f.Write(data)
	}
	if err != nil {
		return fmt.Errorf("write temporary record: %w", err)
	}
	step("write")
	if err = fault("fsync", "sync", f.Name()); err == nil {
		err = f.Sync()
	}
	if err != nil { // never retried: the page cache may have dropped the data
		return fmt.Errorf("fsync temporary record: %w", err)
	}
	step("fsync")
	return nil
}
