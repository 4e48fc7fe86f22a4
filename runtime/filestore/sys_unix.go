//go:build linux || darwin

package filestore

import (
	"io/fs"
	"os"
	"syscall"
)

const (
	oNoFollow  = syscall.O_NOFOLLOW
	oNonBlock  = syscall.O_NONBLOCK
	oDirectory = syscall.O_DIRECTORY
)

func supported() error { return nil }

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
