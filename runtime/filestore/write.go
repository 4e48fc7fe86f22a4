package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// stepHook, when set (by tests only), is called after each step of a write
// with the step's name: "claim" (of the circuit's slot, index.go),
// "create", "write", "fsync", "close", "rename", "dirsync". Crash tests
// stop a writer there and kill it.
var stepHook func(step string)

func step(name string) {
	if stepHook != nil {
		stepHook(name)
	}
}

// write durably replaces the circuit's record with data: a private
// temporary file in the directory is written, fsynced, closed and renamed
// over the record, and the directory is fsynced. The rename happens between
// the two changes of the circuit's counter c. The caller holds the lock.
func (s *Store) write(name string, c counter, data []byte) error {
	if err := s.temp(name, data); err != nil {
		return err
	}
	tmp := s.path(tempName(name))
	err := fault("rename", "rename", tmp)
	seq := c.begin()
	if err == nil {
		err = os.Rename(tmp, s.path(recordName(name)))
	}
	c.end(seq)
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("rename record: %w", err)
	}
	step("rename")
	if err := s.syncDir(); err != nil {
		return err // the record is replaced but may not survive a crash
	}
	step("dirsync")
	return nil
}

// remove removes the circuit's record between the two changes of its
// counter c. The caller holds the lock.
func (s *Store) remove(name string, c counter) error {
	path := s.path(recordName(name))
	err := fault("remove", "remove", path)
	seq := c.begin()
	if err == nil {
		err = os.Remove(path)
	}
	c.end(seq)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove record: %w", err)
	}
	_ = os.Remove(s.path(tempName(name))) // a dead writer's, if any
	return s.syncDir()
}

// trial makes every step of a write but the rename: a temporary record is
// written, fsynced and removed, and the directory fsynced. The caller holds
// the lock.
func (s *Store) trial(name string) error {
	if err := s.temp(name, []byte("{}\n")); err != nil {
		return err
	}
	if err := os.Remove(s.path(tempName(name))); err != nil {
		return fmt.Errorf("remove temporary record: %w", err)
	}
	return s.syncDir()
}

// syncDir fsyncs the state directory, making renames and removals durable.
func (s *Store) syncDir() error {
	err := fault("dirsync", "sync", s.dir)
	if err == nil {
		var d *os.File
		if d, err = os.Open(s.dir); err == nil {
			err = d.Sync()
			_ = d.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("fsync state directory: %w", err)
	}
	return nil
}

// temp writes data to a new private temporary record, fsynced and closed.
// The temporary record of a circuit always has the same name,
// <key>.json.tmp-next: the caller holds the circuit's lock, so one found in
// the way is a dead writer's, and is removed before the exclusive create is
// tried again. No directory scan is ever needed to sweep leftovers.
func (s *Store) temp(name string, data []byte) error {
	tmp := s.path(tempName(name))
	var f *os.File
	err := fault("create", "open", tmp)
	if err == nil {
		const flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL | oNoFollow
		f, err = os.OpenFile(tmp, flags, 0o600)
		if errors.Is(err, fs.ErrExist) {
			if err = os.Remove(tmp); err == nil {
				f, err = os.OpenFile(tmp, flags, 0o600)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("create temporary record: %w", err)
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
		return err
	}
	step("close")
	return nil
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
