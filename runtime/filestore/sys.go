package filestore

// The operating system layer. Everything the store needs beyond package os
// is in the per-OS files, behind these few names, so that almost all of the
// store is the same code, tested on linux, on every system it runs on:
//
//	supported() error                      nil where the store works (linux, darwin)
//	accessible(path, mode) error           an access check with the effective ids (faccessat)
//	bootClock() (time.Duration, error)     a clock that no wall-clock step moves and that
//	                                       counts through suspend, shared by every process
//	bootID() (string, error)               an id that changes with every boot
//	identify(fs.FileInfo) fileID           device, inode and owner of a file
//	changeTime(fs.FileInfo) int64          its status change time, which no one can set back
//	mapShared(*os.File, int) ([]byte, error), unmap([]byte)
//	detach([]byte) error                   a mapping given private zeroed memory in place (sys_unix.go)
//	oNoFollow, oNonBlock                   open flags (0 where they do not exist)
//
// sys_linux.go and sys_darwin.go hold the clock and the boot id, sys_unix.go
// what linux and darwin share (mmap, stat fields, flags), sys_other.go the
// stubs that make the package compile elsewhere.

// fileID identifies a file and names its owner.
type fileID struct {
	dev, ino uint64
	uid      int
}
