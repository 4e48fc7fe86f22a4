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
// memory shared by every process of the state directory: the window files,
// beside the change index, mapped with mmap(2). A healthy call adds to them
// with atomic operations and makes no system call; deciding to open the
// circuit is still a locked, durable replace of its record.
//
// There are two window files, of one layout: "window" holds the time
// windows (Policy.Window) in driver.WindowCells, "window-calls" the count
// windows (Policy.WindowCalls) in driver.CallCells. Native byte order:
//
//	offset        size                      what
//	0             8                         magic "cgwindw1" ("cgcalls1")
//	…             windowHeader              reserved, zero
//	windowHeader  windowSlots × slot size   slots: a tag, then the cells
//
// A slot belongs to one circuit and window (span, or number of calls): its
// tag is the circuit's tag mixed with the window, claimed by
// compare-and-swap from zero among the windowProbe slots from the tag's
// home; slots are never freed. A circuit that finds no slot counts in its
// own process's memory (its rate rule then sees only that process's calls)
// rather than fail.
//
// The counts need not survive a reboot, and the files are never synced:
// each is created whole, zeroed (writeWhole and a link: no process maps a
// short file), and then only mapped. A process killed mid-call loses only
// the call it was making: every completed call is already in the shared
// cells. Each process maps each file once, when a circuit first needs it; a
// window file removed or replaced while processes use the directory is not
// supported (they would go on counting in the old one), and one truncated
// under a running process is outside the store's model: a process that
// touches the cut part dies of SIGBUS; the next process refuses the file
// until it is removed.
const (
	windowName   = "window"
	windowMagic  = "cgwindw1"
	windowHeader = 64
	windowSlots  = 1024
	windowSlot   = 8 + int(unsafe.Sizeof(driver.WindowCells{}))
	windowProbe  = 16
	windowSize   = windowHeader + windowSlots*windowSlot

	callWindowName  = "window-calls"
	callWindowMagic = "cgcalls1"
	callWindowSlot  = 8 + int(unsafe.Sizeof(driver.CallCells{}))
	callWindowSize  = windowHeader + windowSlots*callWindowSlot
)

// windowLayout is a window file's name, magic and slot size.
type windowLayout struct {
	name, magic string
	slot        int
}

func (l windowLayout) size() int { return windowHeader + windowSlots*l.slot }

var (
	timeWindows = windowLayout{windowName, windowMagic, windowSlot}
	callWindows = windowLayout{callWindowName, callWindowMagic, callWindowSlot}
)

// windowFile is a Store's mappings of its window files, each made once.
type windowFile struct {
	time, calls windowMapping
}

// windowMapping is one window file mapped, and the cells of circuits that
// found no slot in it.
type windowMapping struct {
	mu    sync.Mutex
	data  atomic.Pointer[[]byte]
	local sync.Map // slot tag → cells
}

var (
	_ driver.WindowStore     = (*Store)(nil)
	_ driver.CallWindowStore = (*Store)(nil)
)

// WindowCells returns the named circuit's cells for windows of span w in the
// state directory's window file, creating the file when there is none.
func (s *Store) WindowCells(name string, w time.Duration) (*driver.WindowCells, error) {
	return windowCells[driver.WindowCells](s, &s.win.time, timeWindows, name, uint64(w))
}

// CallCells returns the named circuit's cells for windows of the last n
// calls in the state directory's count window file, creating the file when
// there is none.
func (s *Store) CallCells(name string, n int) (*driver.CallCells, error) {
	return windowCells[driver.CallCells](s, &s.win.calls, callWindows, name, uint64(n))
}

// windowCells returns the cells, of type T, of the named circuit's window w
// (a span or a number of calls) in the file of layout l that m maps.
func windowCells[T any](s *Store, m *windowMapping, l windowLayout, name string, w uint64) (*T, error) {
	t := (tag(name) ^ w*0x9e3779b97f4a7c15) | 1
	d, err := s.windowData(m, l)
	if err != nil {
		return nil, err
	}
	if off := claimSlot(*d, l, t); off >= 0 {
		return (*T)(unsafe.Pointer(&(*d)[off+8])), nil
	}
	c, _ := m.local.LoadOrStore(t, new(T))
	return c.(*T), nil
}

// claimSlot returns the offset in data of the slot of tag, claiming a free
// one; -1 when none of its windowProbe slots is free.
func claimSlot(data []byte, l windowLayout, tag uint64) int {
	home := int(tag >> 1 % windowSlots)
	for i := range windowProbe {
		off := windowHeader + (home+i)%windowSlots*l.slot
		t := wordAt(data, off)
		if t.Load() == 0 {
			t.CompareAndSwap(0, tag)
		}
		if t.Load() == tag {
			return off
		}
	}
	return -1
}

// windowData returns the window file of layout l that m maps, mapping it
// the first time.
func (s *Store) windowData(m *windowMapping, l windowLayout) (*[]byte, error) {
	if d := m.data.Load(); d != nil {
		return d, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := m.data.Load(); d != nil {
		return d, nil
	}
	path := filepath.Join(s.dir, l.name)
	data, err := mapWindow(path, l)
	if errors.Is(err, fs.ErrNotExist) {
		// A circuit counts in its window before it has a record: the
		// directory may be missing yet, and is made as a write makes it.
		if err = s.checkDir(true); err == nil {
			err = createWindow(s.dir, path, l)
		}
		if err == nil {
			data, err = mapWindow(path, l)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("window counts: %w", err)
	}
	m.data.Store(&data)
	return &data, nil
}

// mapWindow maps the window file of layout l at path after checking that
// it is one.
func mapWindow(path string, l windowLayout) ([]byte, error) {
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
	if !fi.Mode().IsRegular() || fi.Size() != int64(l.size()) {
		return nil, fmt.Errorf("%s is not a %d-byte window file: remove it (window counts need not be kept)", path, l.size())
	}
	data, err := mapShared(f, l.size())
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	if string(data[:len(l.magic)]) != l.magic {
		unmap(data)
		return nil, fmt.Errorf("%s has an unknown format: remove it (window counts need not be kept)", path)
	}
	return data, nil
}

// createWindow writes a zeroed window file of layout l and links it into
// place; when another process linked one first, that one stands.
func createWindow(dir, path string, l windowLayout) error {
	buf := make([]byte, l.size())
	copy(buf, l.magic)
	tmp, err := writeWhole(dir, "."+l.name+"-*", buf)
	if err != nil {
		return fmt.Errorf("create window file: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create window file: %w", err)
	}
	return nil
}
