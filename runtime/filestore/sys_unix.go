//go:build linux || darwin

package filestore

import (
	"io/fs"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
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
