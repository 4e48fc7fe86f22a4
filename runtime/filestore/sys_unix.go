//go:build linux || darwin

package filestore

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	oNoFollow  = syscall.O_NOFOLLOW
	oNonBlock  = syscall.O_NONBLOCK
	oDirectory = syscall.O_DIRECTORY
)

func supported() error { return nil }

// accessible checks, with the effective ids, that this process may access
// path in mode (accessRead, accessWrite, accessSearch): EACCES, or EROFS on a
// read-only file system, when it may not. It opens and changes nothing.
func accessible(path string, mode uint32) error {
	if err := unix.Faccessat(unix.AT_FDCWD, path, mode, unix.AT_EACCESS); err != nil {
		return &fs.PathError{Op: "faccessat", Path: path, Err: err}
	}
	return nil
}

func identify(fi fs.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{uid: -1}
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino, uid: int(st.Uid)}
}

// sparse reports whether the file has holes: fewer bytes allocated than
// its size. A write to a hole needs room, and faults on a full file system.
func sparse(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int64(st.Blocks)*512 < fi.Size()
}

func mapShared(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

func unmap(b []byte) { _ = syscall.Munmap(b) }

// detach replaces the shared mapping b, in one step, by private zeroed
// memory at the same addresses: the file's pages are let go (a removed
// file's space is freed once nothing else maps it), and a goroutine still
// holding b reads and writes that memory, never a fault, nor memory the
// addresses were reused for, as it could after munmap.
func detach(b []byte) error {
	_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(&b[0]), uintptr(len(b)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_FIXED|unix.MAP_PRIVATE|unix.MAP_ANON)
	return err
}

// dirFD is the state directory, open: a name resolves in the directory it
// was when it was opened, whatever its path names since.
type dirFD struct {
	f    *os.File
	path string
}

// openDirFD opens the directory at path, not following a symlink, and
// returns its status.
func openDirFD(path string) (*dirFD, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return &dirFD{f: f, path: path}, fi, nil
}

func (d *dirFD) fd() int { return int(d.f.Fd()) }

// at returns the path of name in the directory, for errors.
func (d *dirFD) at(name string) string { return filepath.Join(d.path, name) }

// open is openat(2) of name in the directory, never following a symlink.
func (d *dirFD) open(name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := unix.Openat(d.fd(), name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.at(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.at(name)), nil
}

// id identifies the file name in the directory, not following a symlink.
func (d *dirFD) id(name string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileID{}, &fs.PathError{Op: "lstat", Path: d.at(name), Err: err}
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino, uid: int(st.Uid)}, nil
}

// rename renames from over to, both in the directory.
func (d *dirFD) rename(from, to string) error {
	if err := unix.Renameat(d.fd(), from, d.fd(), to); err != nil {
		return &os.LinkError{Op: "rename", Old: d.at(from), New: d.at(to), Err: err}
	}
	return nil
}

// remove removes the file name from the directory.
func (d *dirFD) remove(name string) error {
	if err := unix.Unlinkat(d.fd(), name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: d.at(name), Err: err}
	}
	return nil
}

func (d *dirFD) sync() error  { return d.f.Sync() }
func (d *dirFD) close() error { return d.f.Close() }
