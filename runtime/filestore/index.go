package filestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The change index lets a process reuse its decoded copy of a record with no
// system call at all, while every process still sees every change.
//
// The index is one small file in the state directory, mapped into every
// process that uses the directory. It has a slot per circuit: a tag (the
// first eight bytes of the circuit's key) and a change counter. A writer,
// holding the circuit's flock, makes the counter odd before it renames or
// removes the record and even (and larger) after. A reader reuses its copy
// only when the counter is even and the same as when it read the record,
// having checked it both before and after the read; otherwise it reads the
// file. So:
//
//   - a writer killed between its two bumps leaves the counter odd, and
//     every reader reads the file until the next writer of that circuit
//     (which holds the same lock, so no other writer is mid-way) bumps it
//     past;
//   - a record renamed after a reader's read is always followed by a bump
//     the reader will see;
//   - a circuit without a slot (the index is full, missing or unusable) is
//     always read from the file, as if there were no index.
//
// The index is created whole (written to a temporary file and linked into
// place, so no process maps a short file) by the first writer. It is never
// deleted; deleting files in a state directory while processes use it is not
// supported.
const (
	indexName   = "index"
	indexMagic  = "cgindex1"
	indexSlots  = 4096
	indexHeader = 64
	slotSize    = 16
	indexSize   = indexHeader + indexSlots*slotSize
)

// index is a mapped change index.
type index struct {
	data []byte
}

// slot is one circuit's tag and change counter in the index.
type slot struct {
	tag atomic.Uint64
	ctr atomic.Uint64
}

// tagOf returns the circuit's tag: the first eight bytes of its key, never 0.
func tagOf(key [32]byte) uint64 {
	return binary.LittleEndian.Uint64(key[:8]) | 1
}

// openIndex maps the state directory's index; with create, it creates the
// index first when there is none. It returns nil, nil when there is none.
func openIndex(dir string, create bool) (*index, error) {
	path := filepath.Join(dir, indexName)
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := createIndex(dir, path); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat index: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() != indexSize {
		return nil, fmt.Errorf("index %s is not a %d-byte file: ignored", path, indexSize)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, indexSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map index: %w", err)
	}
	if string(data[:len(indexMagic)]) != indexMagic {
		_ = syscall.Munmap(data)
		return nil, fmt.Errorf("index %s has an unknown format: ignored", path)
	}
	return &index{data: data}, nil
}

// createIndex writes a zeroed index to a temporary file and links it into
// place; when another process linked one first, that one stands.
func createIndex(dir, path string) error {
	buf := make([]byte, indexSize)
	copy(buf, indexMagic)
	tmp, err := writeWhole(dir, ".index-*", buf)
	if err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create index: %w", err)
	}
	return nil
}

func (x *index) slotAt(i int) *slot {
	return (*slot)(unsafe.Pointer(&x.data[indexHeader+i*slotSize]))
}

// find returns the slot tagged tag, or nil. With claim, a free slot is
// claimed for tag when there is none yet; only writers claim.
func (x *index) find(tag uint64, claim bool) *slot {
	start := int(tag>>1) % indexSlots
	for i := range indexSlots {
		s := x.slotAt((start + i) % indexSlots)
		t := s.tag.Load()
		if t == tag {
			return s
		}
		if t == 0 {
			if !claim {
				return nil
			}
			if s.tag.CompareAndSwap(0, tag) || s.tag.Load() == tag {
				return s
			}
		}
	}
	return nil
}

// begin marks a change of the slot's record as under way: the counter
// becomes odd and larger than any value seen before. It reports whether
// the counter was odd already: a writer died between its bumps, and may
// have left a temporary file.
func (s *slot) begin() (c uint64, interrupted bool) {
	old := s.ctr.Load()
	c = (old | 1) + 2
	s.ctr.Store(c)
	return c, old&1 == 1
}

// end marks the change as complete: the counter becomes even.
func (s *slot) end(c uint64) { s.ctr.Store(c + 1) }
