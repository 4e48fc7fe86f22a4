package filestore

import (
	"crypto/sha256"
	"time"
)

// The file store's clock is the kernel's boot clock (bootClock: linux's
// CLOCK_BOOTTIME, darwin's CLOCK_MONOTONIC), which every process on the
// server shares, which counts through suspend, and which no wall-clock step
// moves: a step of the wall clock cannot stretch or cut short a cooldown or a
// lease. To keep recorded times readable, the boot clock is anchored to the
// wall clock once per boot: the anchor is the wall-clock time at which the
// boot clock read zero, and the store's time is the anchor plus the boot
// clock.
//
// The anchor lives in the header of the change index, beside the boot it
// belongs to (index.go), so every process that maps the index reads the same
// anchor. The first process of a boot to map the index anchors it, under
// the directory-wide lock; a reboot changes the boot id and the anchor is
// taken anew, so deadlines recorded before keep their wall-clock meaning.
// Within a boot the anchor never changes while the index lives. An index
// made anew within a boot (removed by another actor) takes the wall clock's
// anchor then: deadlines move by the wall clock's steps since the boot
// (docs/file-store.md).
//
// Between readings of the boot clock a process advances it with its
// monotonic clock, reading it afresh every clockResync. The monotonic
// clock stops while the machine is suspended; the wall clock does not. So
// a reading whose wall clock moved away from its monotonic clock by more
// than clockJump since the last reading of the boot clock (a suspend, or a
// step of the wall clock) reads the boot clock afresh too: a process just
// resumed never dates a deadline by the time before its suspend.

const (
	clockResync = time.Second
	clockJump   = 5 * time.Millisecond
)

// clockState is a process's reading of the store's clock.
type clockState struct {
	anchor int64         // wall-clock Unix ns at which the boot clock read zero
	boot   time.Duration // the boot clock at mono
	mono   int64         // the monotonic clock at that reading, from Store.epoch
	skew   int64         // the wall clock less mono then, in Unix ns
}

// Now returns the store's time: the boot clock, anchored for this boot in
// the change index. The Breaker calls it when a decision needs the time.
func (s *Store) Now() time.Time {
	t := time.Now()
	mono := int64(t.Sub(s.epoch))
	st := s.clk.Load()
	if st == nil || mono-st.mono >= int64(clockResync) || abs(t.UnixNano()-mono-st.skew) > int64(clockJump) ||
		s.anchorMoved(st) {
		st = s.syncClock()
	}
	return time.Unix(0, st.anchor+int64(st.boot)+mono-st.mono).UTC()
}

// anchorMoved reports whether the mapped index holds another anchor than
// st's.
func (s *Store) anchorMoved(st *clockState) bool {
	m := s.m.Load()
	return m != nil && m.anchored.Load() && m.anchor != st.anchor
}

func abs(v int64) int64 { return max(v, -v) }

// bootReading is syncClock's reading of the boot clock; tests stop the
// process before it.
var bootReading = bootClock

// syncClock reads the boot clock, then the monotonic clock, and the
// anchor. The monotonic reading comes after the boot clock's: paired with
// an earlier one (a process stopped in between), the clock would run ahead
// by the gap and end deadlines early; paired with a later one, it runs
// behind until the next resync. The anchor is the mapped
// index's, or else this boot's in the index file's header, looked at
// without mapping it for use (no directory or index is made, no lock
// taken), or else, while the index cannot be used, one taken from the wall
// clock now.
func (s *Store) syncClock() *clockState {
	boot, err := bootReading()
	t := time.Now()
	mono := int64(t.Sub(s.epoch))
	st := &clockState{boot: boot, mono: mono, skew: t.UnixNano() - mono}
	if err != nil {
		st.boot = time.Duration(s.wall().UnixNano()) // no boot clock: the wall clock
	} else if m := s.m.Load(); m != nil && m.anchored.Load() {
		st.anchor = m.anchor
	} else if a, ok := s.peekAnchor(); ok {
		st.anchor = a
	} else {
		st.anchor = s.anchorOf(boot)
	}
	s.clk.Store(st)
	return st
}

// peekAnchor returns the anchor in the index file's header when it is this
// boot's.
func (s *Store) peekAnchor() (int64, bool) {
	m, err := mapIndex(s.path(indexName))
	if err != nil {
		return 0, false
	}
	defer unmap(m.data)
	boot, err := s.boot()
	if err != nil || m.load(hdrBoot) != boot {
		return 0, false
	}
	return int64(m.load(hdrAnchor)), true
}

// anchorOf returns the anchor of boot, a reading of the boot clock just
// taken: the wall-clock Unix ns at which the boot clock read zero.
func (s *Store) anchorOf(boot time.Duration) int64 { return s.wall().UnixNano() - int64(boot) }

// anchorNow returns the anchor as of now. With no boot clock it is the
// wall clock now: syncClock then reads the wall clock, and no anchor.
func (s *Store) anchorNow() int64 {
	boot, _ := bootClock()
	return s.anchorOf(boot)
}

// boot returns this boot's hash, never 0. A failed read of the boot id
// (out of descriptors, say) is not kept: the next call reads it again.
func (s *Store) boot() (uint64, error) {
	if h := s.bootHash.Load(); h != 0 {
		return h, nil
	}
	if err := fault("boot", "open", "the boot id"); err != nil {
		return 0, err
	}
	id, err := bootID()
	if err != nil {
		return 0, err
	}
	h := tagOf(sha256.Sum256([]byte(id)))
	s.bootHash.Store(h)
	return h, nil
}
