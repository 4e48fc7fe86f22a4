package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// The window counts of the rate rule (circuit.Policy.FailureRate) live in
// memory shared by every process of the state directory: the window file,
// beside the change index, mapped with mmap(2). A healthy call adds to them
// with atomic operations and makes no system call; deciding to open the
// circuit is still a locked, durable replace of its record.
//
// Layout, native byte order:
//
//	offset        size                      what
//	0             8                         magic "cgwindw1"
//	…             windowHeader              reserved, zero
//	windowHeader  windowSlots × windowSlot  slots: a tag, then a driver.WindowCells
//
// A slot belongs to one circuit and window span: its tag is the circuit's
// tag mixed with the span, claimed by compare-and-swap from zero among the
// windowProbe slots from the tag's home; slots are never freed. A circuit
// that finds no slot counts in its own process's memory (its rate rule then
// sees only that process's calls) rather than fail.
//
// The counts need not survive a reboot, and the file is never synced: it is
// created whole, zeroed (writeWhole and a link: no process maps a short
// file), and then only mapped. A process killed mid-call loses only the
// call it was making: every completed call is already in the shared cells.
// Each process maps the file once; a window file removed or replaced while
// processes use the directory is not supported (they would go on counting
// in the old one), and a fault of the mapping (the file truncated under a
// process) is turned by the Breaker into a *circuit.StateError.
const (
	windowName   = "window"
	windowMagic  = "cgwindw1"
	windowHeader = 64
	windowSlots  = 1024
	windowSlot   = 8 + int(unsafe.Sizeof(driver.WindowCells{}))
	windowProbe  = 16
	windowSize   = windowHeader + windowSlots*windowSlot
)

// windowFile is a Store's mapping of the window file, made once.
type windowFile struct {
	mu    sync.Mutex
	data  atomic.Pointer[[]byte]
	local sync.Map // slot tag → *driver.WindowCells, for circuits without a slot
}

var _ driver.WindowStore = (*Store)(nil)

// WindowCells returns the named circuit's cells for windows of span w in the
// state directory's window file, creating the file when there is none.
func (s *Store) WindowCells(name string, w time.Duration) (*driver.WindowCells, error) {
	data, err := s.windowData()
	if err != nil {
		return nil, err
	}
	tag := (s.entry(name).tag ^ uint64(w)*0x9e3779b97f4a7c15) | 1
	home := int(tag>>1) % windowSlots
	for i := range windowProbe {
		off := windowHeader + (home+i)%windowSlots*windowSlot
		t := (*atomic.Uint64)(unsafe.Pointer(&data[off]))
		if t.Load() == 0 {
			t.CompareAndSwap(0, tag)
		}
		if t.Load() == tag {
			return (*driver.WindowCells)(unsafe.Pointer(&data[off+8])), nil
		}
	}
	c, _ := s.win.local.LoadOrStore(tag, new(driver.WindowCells))
	return c.(*driver.WindowCells), nil
}

// windowData returns the mapped window file, mapping it the first time.
func (s *Store) windowData() ([]byte, error) {
	if d := s.win.data.Load(); d != nil {
		return *d, nil
	}
	s.win.mu.Lock()
	defer s.win.mu.Unlock()
	if d := s.win.data.Load(); d != nil {
		return *d, nil
	}
	path := filepath.Join(s.dir, windowName)
	data, err := mapWindow(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err = createWindow(s.dir, path); err == nil {
			data, err = mapWindow(path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("window counts: %w", err)
	}
	s.win.data.Store(&data)
	return data, nil
}

// mapWindow maps the window file at path after checking that it is one.
func mapWindow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR|oNoFollow|oNonBlock, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symlink", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkOwner("window file", path, fi); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() != int64(windowSize) {
		return nil, fmt.Errorf("%s is not a %d-byte window file: remove it (window counts need not be kept)", path, windowSize)
	}
	data, err := mapShared(f, windowSize)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	if string(data[:len(windowMagic)]) != windowMagic {
		unmap(data)
		return nil, fmt.Errorf("%s has an unknown format: remove it (window counts need not be kept)", path)
	}
	return data, nil
}

// createWindow writes a zeroed window file and links it into place; when
// another process linked one first, that one stands.
func createWindow(dir, path string) error {
	buf := make([]byte, windowSize)
	copy(buf, windowMagic)
	tmp, err := writeWhole(dir, ".window-*", buf)
	if err != nil {
		return fmt.Errorf("create window file: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create window file: %w", err)
	}
	return nil
}
