package filestore

import (
	"encoding/binary"
	"math/rand/v2"
	"sync/atomic"
	"unsafe"
)

// The change index lets the Breaker use its copy of a record again with no
// system call at all, while every process still sees every change; its
// header holds this boot's clock anchor (clock.go).
//
// The index is one file in the state directory, mapped with mmap(2) into
// every process that uses the directory. Its layout, in 8-byte words
// (native byte order, accessed atomically):
//
//	offset         size              what
//	0              8                 magic "cgindex4"
//	hdrBoot        8                 hash of the boot the anchor belongs to (0: none yet)
//	hdrAnchor      8                 the anchor: wall-clock Unix ns at which the boot clock read 0
//	…              up to headerSize  reserved, zero
//	slotsOffset    slotCount × 16    slots: a circuit's tag, then its change counter
//	spillOffset    spillCount × 8    shared counters of circuits without a slot
//	indexSize                        end
//
// A new region goes after the last one: add its offset and size here, grow
// indexSize and change indexMagic, so that a process of an earlier layout
// finds the index damaged rather than misread.
//
// A circuit's counter is found from its tag (the first eight bytes of its
// key) by probing at most probeWindow slots from the tag's home slot: the
// slot holding its tag, or an empty one a writer claims (slots are never
// freed; readers claim nothing, and use the spill counter until a writer
// has claimed a slot). A circuit that finds the window full uses the spill
// counter its tag hashes to, shared with the other circuits of that hash.
//
// A writer, holding the circuit's flock, changes the counter before it
// renames (or removes) the record and again after. A reader vouches for the
// record it read only while the counter is stable and the same before and
// after the read. Each change gives the counter a random value, not the
// next one. The two kinds of counter differ in how a change in progress
// shows:
//
//   - a slot is its circuit's own, and only that circuit's lock holder
//     writes it: the counter is odd during a change and even after. A
//     writer killed between the two leaves it odd, so readers read the file
//     until the next writer of the circuit (it holds the same lock, so no
//     other writer is half-way) moves it on;
//   - a spill counter has writers of several circuits at once: each change
//     adds one to its low 16 bits (one more writer in progress) and later
//     takes one away, and both give the other 48 bits a new random value, by
//     compare-and-swap. A writer killed half-way leaves the count above
//     zero: the circuits of that counter are then read from their files
//     (correct, slower) until the index is made anew.
//
// Every access is a plain atomic operation on the mapping, with no guard
// against a fault: the store never shrinks a mapped index file, and one
// truncated under a running process is outside the store's model
// (docs/file-store.md): a process that touches the cut part dies of SIGBUS,
// as with a bbolt file.
const (
	indexName     = "index"
	indexLockName = "index.lock"
	indexMagic    = "cgindex4"

	hdrBoot    = 8
	hdrAnchor  = 16
	headerSize = 4096

	slotCount   = 4096
	slotSize    = 16
	probeWindow = 16
	slotsOffset = headerSize

	spillCount  = 4096
	spillOffset = slotsOffset + slotCount*slotSize
	spillBusy   = 1<<16 - 1 // the writers-in-progress bits

	indexSize = spillOffset + spillCount*8
)

// mapping is a mapped change index.
type mapping struct {
	data []byte
	id   fileID // the index file it maps

	// boot and anchor are the header's, this boot's once anchored is set
	// (under Store.mu): a check that finds them changed retires the mapping.
	boot     uint64
	anchor   int64
	anchored atomic.Bool

	// ctime is the file's status change time at its last check: a write to
	// the file by other means than a mapping moves it, which no one can set
	// back. Under Store.mu.
	ctime int64

	// trust says whether the mapping may be used without checking that it
	// is still the directory's index, in its low bits: trustFresh after a
	// check, trustDue once recheck has passed since (the store's ticker),
	// and 0 once it is replaced, removed or damaged, for good. Its other
	// bits count the checks that found the change time moved and the writes
	// that failed: a Watch holds only while trust is what it was when the
	// record was read, so either drops every Watch, with no new mapping.
	trust atomic.Uint64
}

// The states of mapping.trust, and its count of drops.
const (
	trustRetired uint64 = iota
	trustDue
	trustFresh
	trustState = 3 // the bits of the state
	trustMoved = 4 // one more drop
)

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

// word returns the 8-byte word at off.
func (m *mapping) word(off int) *atomic.Uint64 { return wordAt(m.data, off) }

// wordAt returns the 8-byte word at off in a mapped file's data.
func wordAt(data []byte, off int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&data[off]))
}

func (m *mapping) load(off int) uint64 { return m.word(off).Load() }

// release stops every use of the mapping and lets go of its file, which the
// store no longer uses: the addresses are given private zeroed memory in
// its place (detach), so that a Breaker still holding a Watch of it reads
// a word that vouches for nothing (its trust is retired first), and the
// space of a removed index file is freed once no process maps it. The
// caller holds Store.mu, and calls it once.
func (m *mapping) release() {
	m.trust.Store(trustRetired)
	_ = detach(m.data) // failing, it stays mapped: retired, and used no more
}

// fresh reports whether the mapping may be used without checking the file.
func (m *mapping) fresh() bool { return m.trust.Load()&trustState == trustFresh }

// counterOf returns the circuit of tag's change counter, for a reader: its
// slot, or its spill counter when it has none.
func (m *mapping) counterOf(tag uint64) counter {
	for i := range probeWindow {
		at := m.slotAt(tag, i)
		switch m.load(at) {
		case tag:
			return counter{m: m, off: at + 8, owned: true}
		case 0:
			return m.spillOf(tag)
		}
	}
	return m.spillOf(tag)
}

// claim returns the circuit of tag's change counter, for a writer, which
// holds the circuit's lock: its slot, claiming a free one when it has none
// yet, or its spill counter when its probe window is full. A claim is a
// change of the spill counter: readers may have vouched for records by it,
// and the changes go to the slot from then on. A writer killed during the
// claim leaves the spill counter busy, and its circuits are read from their
// files, never vouched for by a counter no change moves.
func (m *mapping) claim(tag uint64) counter {
	for i := range probeWindow {
		at := m.slotAt(tag, i)
		if m.load(at) == 0 {
			spill := m.spillOf(tag)
			v := spill.begin()
			m.word(at).CompareAndSwap(0, tag)
			step("claim")
			spill.end(v)
		}
		if m.load(at) == tag {
			return counter{m: m, off: at + 8, owned: true}
		}
	}
	return m.spillOf(tag)
}

// slotAt returns the offset of the i-th slot of tag's probe window.
func (m *mapping) slotAt(tag uint64, i int) int {
	return slotsOffset + int((tag>>1+uint64(i))%slotCount)*slotSize
}

// spillOf returns the spill counter of tag.
func (m *mapping) spillOf(tag uint64) counter {
	return counter{m: m, off: spillOffset + int(tag>>1%spillCount)*8}
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
func (c counter) begin() uint64 {
	if !c.owned {
		return c.spill(+1)
	}
	v := fresh(c.m.load(c.off)) | 1
	c.m.word(c.off).Store(v)
	return v
}

// end marks the change begun with value v as complete.
func (c counter) end(v uint64) {
	if !c.owned {
		c.spill(-1)
		return
	}
	c.m.word(c.off).Store(fresh(v) &^ 1)
}

// spill adds d to the writers in progress of a spill counter and gives its
// other bits a new random value; it returns the new value.
func (c counter) spill(d int) uint64 {
	for {
		old := c.m.load(c.off)
		v := fresh(old)&^spillBusy | uint64(int(old&spillBusy)+d)&spillBusy
		if c.m.word(c.off).CompareAndSwap(old, v) {
			return v
		}
	}
}

// fresh returns a random value whose bits above the lowest 16 differ from
// those of old, the counter's value.
func fresh(old uint64) uint64 {
	for {
		if v := rand.Uint64(); v>>16 != old>>16 {
			return v
		}
	}
}

// newIndex returns the contents of a fresh index anchored at anchor for boot.
func newIndex(boot uint64, anchor int64) []byte {
	buf := make([]byte, indexSize)
	copy(buf, indexMagic)
	binary.NativeEndian.PutUint64(buf[hdrBoot:], boot)
	binary.NativeEndian.PutUint64(buf[hdrAnchor:], uint64(anchor))
	return buf
}
