package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// A DirError reports a state directory the store cannot use: what is wrong
// and how to fix it. Open returns one for a directory it finds unusable;
// a write that finds the directory spoilt since returns a
// *circuit.StateError wrapping one.
type DirError struct {
	Dir     string // the state directory, as an absolute path
	Path    string // the path at fault: Dir, or the ancestor that keeps it from being created
	Problem string // what is wrong, a phrase that follows the directory's path
	Fix     string // what to do about it
	Err     error  // the system's error behind Problem, if any
}

func (e *DirError) Error() string {
	return "filestore: state directory " + e.Dir + " " + e.Problem + "; " + e.Fix
}

func (e *DirError) Unwrap() error { return e.Err }

// The modes of an access check (accessible): POSIX's R_OK, W_OK and X_OK.
const (
	accessRead   = 4
	accessWrite  = 2
	accessSearch = 1
)

// errNoDir reports that the state directory does not exist yet.
var errNoDir = errors.New("state directory does not exist")

// verifyDir is Open's check of the state directory, which it neither
// creates nor changes: an existing one must pass checkDir's checks and be
// readable, writable and searchable by this process; a missing one must
// have a nearest existing ancestor that is a directory in which this
// process may create entries. Both are access checks (faccessat with the
// effective ids, which also report a read-only file system), not writes.
func verifyDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err == nil:
		if err := dirProblem(dir, fi); err != nil {
			return err
		}
		if err := accessible(dir, accessRead|accessWrite|accessSearch); err != nil {
			return unwritable(dir, dir, err)
		}
		return nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return verifyCreatable(dir)
	}
	return &DirError{Dir: dir, Path: dir, Err: err,
		Problem: fmt.Sprintf("cannot be looked at (%v)", err),
		Fix:     "give " + userName(os.Geteuid()) + " search permission (x) on every directory above it, or choose another directory"}
}

// verifyCreatable checks that the missing directory dir could be created
// by this process: its nearest existing ancestor is a directory it may
// create entries in.
func verifyCreatable(dir string) error {
	p := dir
	for {
		parent := filepath.Dir(p)
		if parent == p {
			return nil // the root exists; reached only if Lstat lied
		}
		p = parent
		fi, err := os.Stat(p) // ancestors may be symlinks (/var/run → /run)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case errors.Is(err, syscall.ENOTDIR):
			continue // a file higher up: found on the way up
		case err != nil:
			return &DirError{Dir: dir, Path: p, Err: err,
				Problem: fmt.Sprintf("does not exist and cannot be created: %s cannot be looked at (%v)", p, err),
				Fix:     "give " + userName(os.Geteuid()) + " search permission (x) on it, or choose another directory"}
		case !fi.IsDir():
			return &DirError{Dir: dir, Path: p,
				Problem: fmt.Sprintf("does not exist and cannot be created: %s is not a directory", p),
				Fix:     "remove " + p + " (rm " + p + "), or choose another path"}
		}
		if err := accessible(p, accessWrite|accessSearch); err != nil {
			return uncreatable(dir, p, err)
		}
		return nil
	}
}

// uncreatable reports a missing dir whose nearest existing ancestor p this
// process may not create entries in.
func uncreatable(dir, p string, err error) *DirError {
	if errors.Is(err, syscall.EROFS) {
		return &DirError{Dir: dir, Path: p, Err: err,
			Problem: fmt.Sprintf("does not exist and cannot be created: %s is on a read-only file system", p),
			Fix:     "mount it read-write, or choose a directory on a writable file system"}
	}
	euid := os.Geteuid()
	return &DirError{Dir: dir, Path: p, Err: err,
		Problem: fmt.Sprintf("does not exist and cannot be created: %s is not writable by %s: %s", p, userName(euid), describe(p)),
		Fix: fmt.Sprintf("create it for this user as one who may: mkdir -p -m 700 %s && chown %d %s; "+
			"or choose a directory under one %s may write", dir, euid, dir, userName(euid))}
}

// unwritable reports an existing dir that this process may not read, write
// or search.
func unwritable(dir, p string, err error) *DirError {
	if errors.Is(err, syscall.EROFS) {
		return &DirError{Dir: dir, Path: p, Err: err,
			Problem: "is on a read-only file system",
			Fix:     "mount it read-write, or choose a directory on a writable file system"}
	}
	return &DirError{Dir: dir, Path: p, Err: err,
		Problem: fmt.Sprintf("is not readable, writable and searchable by %s: %s", userName(os.Geteuid()), describe(p)),
		Fix:     "chmod 700 " + dir}
}

// describe gives the mode and owner of p, for an error.
func describe(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("mode %#o, owned by %s", fi.Mode().Perm(), userName(identify(fi).uid))
}

// dirProblem reports what makes fi, the Lstat of the state directory dir,
// unusable: a symlink, not a directory, another user's, writable by group
// or others. Nil when none of these.
func dirProblem(dir string, fi fs.FileInfo) *DirError {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(dir)
		return &DirError{Dir: dir, Path: dir,
			Problem: "is a symlink (to " + target + "): refused, since whoever can change the link can swap every circuit's state",
			Fix:     "use the directory it names as the path, or replace the link by a directory"}
	case !fi.IsDir():
		return &DirError{Dir: dir, Path: dir,
			Problem: "is not a directory",
			Fix:     "remove it (rm " + dir + ") or choose another path"}
	}
	if uid, euid := identify(fi).uid, os.Geteuid(); uid >= 0 && euid >= 0 && uid != euid {
		return &DirError{Dir: dir, Path: dir,
			Problem: fmt.Sprintf("is owned by %s, but this process runs as %s: refused, since its owner can change every circuit's state", userName(uid), userName(euid)),
			Fix:     fmt.Sprintf("chown it (and the state directory's files) to uid %d: chown -R %d %s; or use a state directory of this user's own", euid, euid, dir)}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return &DirError{Dir: dir, Path: dir,
			Problem: fmt.Sprintf("is writable by group or others (mode %#o): refused, since they could change every circuit's state", perm),
			Fix:     "chmod 700 " + dir}
	}
	return nil
}

// checkDir verifies the state directory before a read or write:
// dirProblem's checks. With create, a missing directory is created 0700
// (whatever the umask); without, it is errNoDir.
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
	if de := dirProblem(s.dir, fi); de != nil {
		return de
	}
	return nil
}
