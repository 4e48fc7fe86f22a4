package filestore

import (
	"encoding/binary"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// The change index lets a process reuse its decoded copy of a record with no
// system call at all, while every process still sees every change; its
// header holds this boot's clock anchor (clock.go).
//
// The index is one file in the state directory, mapped with mmap(2) into
// every process that uses the directory. Its layout, in 8-byte words
// (native byte order, accessed atomically):
//
//	offset         size              what
//	0              8                 magic "cgindex2"
//	hdrBoot        8                 hash of the boot the anchor belongs to (0: none yet)
//	hdrAnchor      8                 the anchor: wall-clock Unix ns at which the boot clock read 0
//	…              up to headerSize  reserved, zero
//	slotsOffset    slotCount × 16    slots: a circuit's tag, then its change counter
//	spillOffset    spillCount × 8    shared counters of circuits without a slot
//	indexSize                        end
//
// A new region (say, shared window counts) goes after the last one: add its
// offset and size here, grow indexSize and change indexMagic, so that a
// process of an earlier layout finds the index damaged rather than misread.
//
// A circuit's counter is found from its tag (the first eight bytes of its
// key) by probing at most probeWindow slots from the tag's home slot: the
// slot holding its tag, or an empty one a writer claims (slots are never
// freed; readers claim nothing, and use the spill counter until a writer
// has claimed a slot). A circuit that finds the window full uses the spill
// counter its tag hashes to, shared with the other circuits of that hash.
// Either way finding it costs at most probeWindow loads.
//
// A writer, holding the circuit's flock, changes the counter before it
// renames (or removes) the record and again after. A reader reuses its copy
// only while the counter is stable and the same as when it read the record,
// having loaded it both before and after the read; otherwise it reads the
// file. The two kinds of counter differ in how a change in progress shows:
//
//   - a slot is its circuit's own, and only that circuit's lock holder
//     writes it: the counter is odd during a change and even, and larger,
//     after. A writer killed between the two leaves it odd, so readers read
//     the file until the next writer of the circuit (it holds the same lock,
//     so no other writer is half-way) moves it on;
//   - a spill counter has writers of several circuits at once: each change
//     adds spillBegin (one more change, one more writer in progress) and
//     then spillEnd (one more change, one writer fewer), so the low 16 bits
//     count the writers in progress and the value only grows. A writer killed
//     half-way leaves the count above zero: the circuits of that counter are
//     then read from their files (correct, slower) until the index is made
//     anew.
//
// Every access goes through load, store, add and cas, which turn a fault of
// the mapping (the file truncated under a running process) into an error
// instead of a SIGBUS; the process then drops the mapping and checks the
// file (store.go).
const (
	indexName     = "index"
	indexLockName = "index.lock"
	indexKeepName = "index.keep" // a second name of the index file (indexfile.go)
	indexMagic    = "cgindex2"

	hdrBoot    = 8
	hdrAnchor  = 16
	headerSize = 4096

	slotCount   = 4096
	slotSize    = 16
	probeWindow = 16
	slotsOffset = headerSize

	spillCount  = 4096
	spillOffset = slotsOffset + slotCount*slotSize
	spillBegin  = 1<<16 + 1
	spillEnd    = 1<<16 - 1
	spillBusy   = 1<<16 - 1 // the writers-in-progress bits

	indexSize = spillOffset + spillCount*8
)

// mapping is a mapped change index.
type mapping struct {
	data []byte
	id   fileID // the index file it maps

	// boot and anchor are the header's, as validated when this process
	// mapped the index or anchored it; anchored reports whether they are
	// this boot's. Set under Store.mu.
	boot     uint64
	anchor   int64
	anchored atomic.Bool

	// until is the Store.mono reading up to which the mapping is trusted
	// without checking that it is still the directory's index; 0 once the
	// mapping is retired (replaced, removed, damaged or faulted).
	until atomic.Int64
}

// counter is a circuit's change counter in a mapping.
type counter struct {
	m     *mapping
	off   int  // the counter's offset
	owned bool // a slot of its own, not a spill counter
}

// tagOf returns the circuit's tag: the first eight bytes of its key, never 0.
func tagOf(key [32]byte) uint64 {
	return binary.LittleEndian.Uint64(key[:8]) | 1
}

func (m *mapping) word(off int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&m.data[off]))
}

// load returns the word at off; ok is false when the mapping faulted, which
// retires it.
func (m *mapping) load(off int) (v uint64, ok bool) {
	old := debug.SetPanicOnFault(true)
	defer m.recoverFault(old, &ok)
	return m.word(off).Load(), true
}

// store sets the word at off; false when the mapping faulted.
func (m *mapping) store(off int, v uint64) (ok bool) {
	old := debug.SetPanicOnFault(true)
	defer m.recoverFault(old, &ok)
	m.word(off).Store(v)
	return true
}

// add adds d to the word at off and returns the new value; ok is false when
// the mapping faulted.
func (m *mapping) add(off int, d uint64) (v uint64, ok bool) {
	old := debug.SetPanicOnFault(true)
	defer m.recoverFault(old, &ok)
	return m.word(off).Add(d), true
}

// cas is CompareAndSwap on the word at off; ok is false when the mapping
// faulted.
func (m *mapping) cas(off int, old, new uint64) (swapped, ok bool) {
	prev := debug.SetPanicOnFault(true)
	defer m.recoverFault(prev, &ok)
	return m.word(off).CompareAndSwap(old, new), true
}

// recoverFault restores the goroutine's panic-on-fault setting and turns a
// fault of the mapping into ok = false.
func (m *mapping) recoverFault(old bool, ok *bool) {
	debug.SetPanicOnFault(old)
	if recover() != nil {
		m.retire()
		*ok = false
	}
}

// retire stops every use of the mapping. It stays mapped (a reader may be
// using it this instant) until the store lets go of it (release).
func (m *mapping) retire() { m.until.Store(0) }

// release retires the mapping and lets go of its file, which the store no
// longer uses: the addresses stay reserved but inaccessible (seal), so that
// a reader still holding the mapping gets a fault, turned into an error by
// load, store, add and cas, and the space of a removed index file is freed
// once no process maps it. The caller holds Store.mu, and calls it once.
func (m *mapping) release() {
	m.retire()
	_ = seal(m.data) // failing, it stays mapped: retired, and used no more
}

// trusted reports whether the mapping may be used without checking the file
// at the Store.mono reading now.
func (m *mapping) trusted(now int64) bool { return now < m.until.Load() }

// counterOf returns the circuit's change counter. With claim (writers,
// under the circuit's lock) a free slot in its window is claimed for its
// tag; fresh reports that this call claimed it. Without claim (readers, who
// change no file) a circuit with no slot yet uses its spill counter, which
// a writer that claims a slot for it bumps once, after the claim: a copy
// read under the spill counter is dropped then. final reports that the
// result cannot change for this mapping (a slot, or a full window). ok is
// false when the mapping faulted.
func (m *mapping) counterOf(tag uint64, claim bool) (c counter, fresh, final, ok bool) {
	spill := m.spillOf(tag)
	home := int(tag>>1) % slotCount
	for i := range probeWindow {
		at := slotsOffset + (home+i)%slotCount*slotSize
		t, ok := m.load(at)
		if !ok {
			return counter{}, false, false, false
		}
		if t == 0 {
			if !claim {
				return spill, false, false, true
			}
			swapped, ok := m.cas(at, 0, tag)
			if !ok {
				return counter{}, false, false, false
			}
			if t, ok = m.load(at); !ok {
				return counter{}, false, false, false
			}
			fresh = swapped && t == tag
		}
		if t == tag {
			return counter{m: m, off: at + 8, owned: true}, fresh, true, true
		}
	}
	return spill, false, true, true
}

// spillOf returns the spill counter of tag.
func (m *mapping) spillOf(tag uint64) counter {
	return counter{m: m, off: spillOffset + int(tag>>1)%spillCount*8}
}

// stable reports whether a counter value shows no change in progress.
func (c counter) stable(v uint64) bool {
	if c.owned {
		return v&1 == 0
	}
	return v&spillBusy == 0
}

// begin marks a change of the circuit's record as under way. It returns the
// value to give end.
func (c counter) begin() (v uint64, ok bool) {
	if !c.owned {
		return c.m.add(c.off, spillBegin)
	}
	old, ok := c.m.load(c.off)
	if !ok {
		return 0, false
	}
	v = (old | 1) + 2
	return v, c.m.store(c.off, v)
}

// end marks the change begun with value v as complete, and returns the
// counter's value after it.
func (c counter) end(v uint64) (uint64, bool) {
	if !c.owned {
		return c.m.add(c.off, spillEnd)
	}
	return v + 1, c.m.store(c.off, v+1)
}

// newIndex returns the contents of a fresh index anchored at anchor for boot.
func newIndex(boot uint64, anchor int64) []byte {
	buf := make([]byte, indexSize)
	copy(buf, indexMagic)
	binary.NativeEndian.PutUint64(buf[hdrBoot:], boot)
	binary.NativeEndian.PutUint64(buf[hdrAnchor:], uint64(anchor))
	return buf
}
