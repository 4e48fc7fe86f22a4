package filestore

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"sync/atomic"
	"unsafe"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
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
//	0              8                 magic "cgindex3"
//	hdrBoot        8                 hash of the boot the anchor belongs to (0: none yet)
//	hdrAnchor      8                 the anchor: wall-clock Unix ns at which the boot clock read 0
//	hdrCheck       8                 anchorCheck of the boot and the anchor
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
// file. Each change gives the counter a random value (of 64 bits less the
// marks below), not the next one: an index restored from an earlier copy
// holds values readers have seen, but no change made after the restore can
// give a counter a value a reader holds a copy by. The two kinds of counter
// differ in how a change in progress shows:
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
// truncated under a running process by another actor is outside the
// store's model (docs/file-store.md): a process that touches the cut part
// dies of SIGBUS, as with a bbolt file.
const (
	indexName     = "index"
	indexLockName = "index.lock"
	indexKeepName = "index.keep" // a second name of the index file (indexfile.go)
	indexMagic    = "cgindex3"

	hdrBoot    = 8
	hdrAnchor  = 16
	hdrCheck   = 24
	headerSize = 4096

	slotCount   = 4096
	slotSize    = 16
	probeWindow = 16
	slotsOffset = headerSize

	spillCount  = 4096
	spillOffset = slotsOffset + slotCount*slotSize
	spillBegin  = 1<<16 + 1 // one more writer, and a change (poison)
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

	// ctime is the file's status change time at its last check: a write to
	// the file by other means than a mapping (an index restored in place
	// from a copy) moves it, which no one can set back. Under Store.mu.
	ctime int64

	// trust says whether the mapping may be used without checking that it
	// is still the directory's index, in its low bits: trustFresh after a
	// check, trustDue once recheck has passed since (the store's timer),
	// and 0 once it is replaced, removed, damaged or faulted, for good. Its
	// other bits count the checks that found the change time moved: a copy
	// of a record is used only while trust is what it was when the copy was
	// taken, so such a check drops every copy, with no new mapping.
	trust atomic.Uint64
}

// The states of mapping.trust, and its count of moved change times.
const (
	trustRetired uint64 = iota
	trustDue
	trustFresh
	trustState = 3 // the bits of the state
	trustMoved = 4 // one more moved change time
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

func (m *mapping) word(off int) *atomic.Uint64 { return wordAt(m.data, off) }

// wordAt returns the 8-byte word at off in a mapped file's data.
func wordAt(data []byte, off int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&data[off]))
}

// load returns the word at off.
func (m *mapping) load(off int) uint64 { return m.word(off).Load() }

// store sets the word at off.
func (m *mapping) store(off int, v uint64) { m.word(off).Store(v) }

// retire stops every use of the mapping. It stays mapped (a reader may be
// using it this instant) until the store lets go of it (release).
func (m *mapping) retire() { m.trust.Store(trustRetired) }

// release retires the mapping and lets go of its file, which the store no
// longer uses: the addresses are given private zeroed memory in its place
// (detach), so that a reader still holding the mapping reads a word that
// vouches for nothing (its trust is retired first), and the space of a
// removed index file is freed once no process maps it. The caller holds
// Store.mu, and calls it once.
func (m *mapping) release() {
	m.retire()
	_ = detach(m.data) // failing, it stays mapped: retired, and used no more
}

// fresh reports whether the mapping may be used without checking the file.
func (m *mapping) fresh() bool { return m.trust.Load()&trustState == trustFresh }

// counterOf returns the circuit's change counter. With claim (writers,
// under the circuit's lock) a free slot in its window is claimed for its
// tag; fresh reports that this call claimed it. Without claim (readers, who
// change no file) a circuit with no slot yet uses its spill counter, which
// a writer that claims a slot for it bumps once, after the claim: a copy
// read under the spill counter is dropped then. final reports that the
// result cannot change for this mapping (a slot, or a full window).
func (m *mapping) counterOf(tag uint64, claim bool) (c counter, fresh, final bool) {
	spill := m.spillOf(tag)
	home := int(tag>>1) % slotCount
	for i := range probeWindow {
		at := slotsOffset + (home+i)%slotCount*slotSize
		t := m.load(at)
		if t == 0 {
			if !claim {
				return spill, false, false
			}
			swapped := m.word(at).CompareAndSwap(0, tag)
			t = m.load(at)
			fresh = swapped && t == tag
		}
		if t == tag {
			return counter{m: m, off: at + 8, owned: true}, fresh, true
		}
	}
	return spill, false, true
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
func (c counter) begin() uint64 {
	if !c.owned {
		return c.spill(+1)
	}
	v := fresh(c.m.load(c.off)) | 1
	c.m.store(c.off, v)
	return v
}

// end marks the change begun with value v as complete, and returns the
// counter's value after it. A slot's counter then holds mark, the mark of
// what the change left (markOf, markCleared, or the mark it held before:
// a bump that changed no file); a spill counter holds none.
func (c counter) end(v, mark uint64) uint64 {
	if !c.owned {
		return c.spill(-1)
	}
	v = fresh(v)&^(markBits|1) | mark&markBits
	c.m.store(c.off, v)
	return v
}

// A slot's counter, stable, holds in its bits 1 to 15 (markBits) the mark
// of what the last completed change of its circuit left in the record file,
// so that a reader can tell a file that is not what the last writer left
// (lost.go): markNone (no change completed under this index), markCleared
// (the record removed, by Delete), or markOf the record written: a digest
// of its incarnation (bits 12 to 15, never zero) and the low 11 bits of its
// version (bits 1 to 11). Bit 0 stays the change-in-progress bit, and the
// bits above 16 the random value each change gives the counter.
const (
	markBits    uint64 = 0xfffe
	markNone    uint64 = 0
	markCleared uint64 = 2
	markVersion uint64 = 0x7ff << 1 // a record mark's version bits
	markWindow         = 0x800      // versions a mark tells apart (11 bits)
)

// leftRecord reports whether the counter, a slot's, says the last change
// of its circuit left a record in the file: its mark is a record's. Only
// the circuit's lock holder can tell it, the counter being stable then.
func (c counter) leftRecord() bool {
	if !c.owned {
		return false
	}
	v := c.m.load(c.off)
	mark := markOfValue(v)
	return c.stable(v) && mark != markNone && mark != markCleared
}

// markOf returns the mark of rec, written as a circuit's record.
func markOf(rec *driver.Record) uint64 {
	h := fnv.New32a()
	h.Write([]byte(rec.Incarnation))
	return (uint64(h.Sum32()%15)+1)<<12 | rec.Version<<1&markVersion
}

// markOfValue returns the mark a slot's stable counter value v holds.
func markOfValue(v uint64) uint64 { return v & markBits }

// behind reports whether rec, read from a circuit's record file, is not
// the record whose mark is mark, nor a later one of its incarnation: the
// file was rolled back (an older copy put back) since the last change. A
// record of another incarnation is: every change through the store marks
// the record it leaves, a Clear and the record made after it included, so
// a file of another incarnation than the mark's was put there behind the
// store's back (a record of an earlier incarnation put back), or the index
// is older than the files (an index restored alone), where the circuit
// then probes once. A record ahead of the mark, of its incarnation (an
// index older than the files), is not behind; nor is any record when the
// mark says none or cleared (a record put back after a Clear holds the
// state it holds). Its version is compared within the mark's 11 bits: a
// record more than 1,024 versions behind may pass for one ahead; and an
// incarnation digest is one of 15, so a record of another incarnation
// passes for one of the mark's one time in 15, and is then judged by its
// version.
func behind(rec *driver.Record, mark uint64) bool {
	if rec == nil || mark == markNone || mark == markCleared {
		return false
	}
	m := markOf(rec)
	if m&^markVersion != mark&^markVersion {
		return true // another incarnation
	}
	d := (mark&markVersion - m&markVersion) >> 1 & (markWindow - 1)
	return d != 0 && d < markWindow/2
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
// those of old, the counter's value: the counter changes whatever marks the
// caller sets in the low bits.
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
	binary.NativeEndian.PutUint64(buf[hdrCheck:], anchorCheck(boot, uint64(anchor)))
	return buf
}

// anchorCheck returns the header's check word for boot and anchor. A header
// whose anchor was changed in place, without its check, is forged: a
// process that never validated an anchor cannot tell a later one from the
// right one, and a later one ends every recorded deadline early.
func anchorCheck(boot, anchor uint64) uint64 {
	var b [16]byte
	binary.NativeEndian.PutUint64(b[:], boot)
	binary.NativeEndian.PutUint64(b[8:], anchor)
	sum := sha256.Sum256(b[:])
	return binary.NativeEndian.Uint64(sum[:])
}

// forged reports whether m's header holds this or another boot's anchor
// that does not match its check word (anchorCheck).
func (m *mapping) forged() bool {
	boot, anchor, check := m.load(hdrBoot), m.load(hdrAnchor), m.load(hdrCheck)
	return boot != 0 && check != anchorCheck(boot, anchor)
}
