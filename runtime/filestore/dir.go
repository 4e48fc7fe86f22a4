package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// errNoDir reports that the state directory does not exist yet.
var errNoDir = errors.New("state directory does not exist")

// checkDir verifies the state directory: a real directory, not a symlink,
// owned by this process's user, not writable by group or others. With
// create, a missing directory is created 0700 (whatever the umask); without,
// it is errNoDir.
func (s *Store) checkDir(create bool) error {
	fi, err := os.Lstat(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return errNoDir
		}
		merr := fault("mkdir", "mkdir", s.dir)
		if merr == nil {
			merr = os.MkdirAll(s.dir, 0o700)
		}
		if merr == nil {
			if merr = fault("chmod", "chmod", s.dir); merr == nil {
				merr = os.Chmod(s.dir, 0o700)
			}
		}
		if merr != nil {
			return fmt.Errorf("create state directory: %w", merr)
		}
		fi, err = os.Lstat(s.dir)
	}
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("state directory %s is a symlink: refused", s.dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("state directory %s is not a directory", s.dir)
	}
	if err := checkOwner("state directory", s.dir, fi); err != nil {
		return err
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("state directory %s is writable by group or others (%v): refused", s.dir, fi.Mode().Perm())
	}
	return nil
}

// syncDir fsyncs the state directory, making renames and removals durable.
func (s *Store) syncDir() error {
	d, err := os.OpenFile(s.dir, os.O_RDONLY|oDirectory|oNoFollow, 0)
	if err != nil {
		return fmt.Errorf("open state directory: %w", err)
	}
	err = fault("dirsync", "sync", s.dir)
	if err == nil {
		err = d.Sync()
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync state directory: %w", err)
	}
	return nil
}
