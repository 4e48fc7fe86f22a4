package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"path/filepath"
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
// anchor from the same memory: two processes cannot hold different anchors
// while they use the same index. The first writer of a boot anchors it,
// under the directory-wide lock; a reboot changes the boot id and the anchor
// is taken anew, so deadlines recorded before keep their wall-clock meaning.
// Within a boot the anchor never changes while the index lives; a process
// compares the header with the anchor it validated at every check of its
// mapping. A later anchor for this boot (the header changed in place, or the
// index replaced by a doctored copy) is damage: the call fails closed and
// the index is replaced, with the validated anchor. An earlier one is taken:
// deadlines then end late, never early. Processes so converge on the
// earliest anchor any of them validated (indexfile.go).
//
// When the index must be made anew within a boot (removed, truncated,
// garbage), records written under the lost anchor X may exist. The new
// anchor is then the smaller of latest − boot, where latest is the latest
// updated_at of the records, and the anchor this process validated (if it
// had none, the wall clock's). Every record of this boot was written at
// X + b with b no later than the boot clock now, so latest − boot <= X: the
// new clock reads no later than the lost one, and a deadline cannot end
// early, whatever the wall clock did meanwhile, nor when this process
// validated a later anchor than the writer of the latest record had taken
// (it may end late, by the time since the last write). A writer's decision
// made with another anchor than its index's is made again (store.go).
//
// Between readings of the boot clock a process advances it with its
// monotonic clock (no system call), reading it afresh every clockResync.

const clockResync = time.Second

// clockState is a process's reading of the store's clock.
type clockState struct {
	anchor int64         // wall-clock Unix ns at which the boot clock read zero
	boot   time.Duration // the boot clock at mono
	mono   int64         // Store.mono at that reading
}

// Now returns the store's time: the boot clock, anchored for this boot in
// the change index. The Breaker calls it when a decision needs the time.
func (s *Store) Now() time.Time {
	if st := s.clk.Load(); st != nil {
		if since := s.mono() - st.mono; since < int64(clockResync) { // monotonic: no system call
			return time.Unix(0, st.anchor+int64(st.boot)+since).UTC()
		}
	}
	st := s.syncClock()
	return time.Unix(0, st.anchor+int64(st.boot)+s.mono()-st.mono).UTC()
}

// syncClock reads the boot clock and the anchor: the index's when it has
// this boot's; else, while the index cannot be read (unusable until it is
// repaired, or out of descriptors), the one this process validated, which
// the repair puts back; else one taken from the wall clock now, which is
// not kept. A clock whose anchor changed has decisions in flight made by
// the other one: they are checked (decidedBy).
func (s *Store) syncClock() *clockState {
	s.clkMu.Lock()
	defer s.clkMu.Unlock()
	boot, err := bootClock()
	st := &clockState{boot: boot, mono: s.mono()}
	switch {
	case err != nil:
		st.anchor, st.boot = 0, time.Duration(s.wall().UnixNano()) // no boot clock: the wall clock
	default:
		st.anchor = s.wall().UnixNano() - int64(boot)
		if m, _ := s.current(context.Background(), needPeek); m != nil && m.anchored.Load() {
			st.anchor = m.anchor
		} else if a, ok := s.validated(); ok {
			st.anchor = a
		}
	}
	if s.clkSet && s.clkAnchor != st.anchor {
		s.anchorMoved.Store(s.mono())
	}
	s.clkAnchor, s.clkSet = st.anchor, true
	s.clk.Store(st)
	return st
}

// validated returns the anchor this process validated for this boot, if
// any.
func (s *Store) validated() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, s.lastSet
}

// clockWrong drops the clock that made a decision decidedBy refused: the
// next reading takes the index's anchor, and the decisions made by the
// wrong clock still in flight are checked against the index's clock.
func (s *Store) clockWrong() {
	s.anchorMoved.Store(s.mono())
	s.clk.Store(nil)
}

// decidedBy reports whether a decision made at the store's time at (the new
// record's UpdatedAt) was made by the clock of m, the checked index a
// writer holds: this process's clock has m's anchor and, when this process
// has lately taken another anchor, at is no later than m's clock now. The second part catches a decision made by the earlier
// clock, with a later anchor than m's: made by m's clock, at cannot be later
// than now, since the store's clock counts from a reading of the boot clock
// no later than this one. Such a decision reads the deadlines another
// process wrote by m's anchor as ending early. (Only lately: a Breaker may
// decide by a clock of its own, circuit.WithClock, whose times say nothing
// of the store's.) The caller holds the circuit's lock.
func (s *Store) decidedBy(m *mapping, at time.Time) bool {
	if !m.anchored.Load() {
		return true // not this boot's: the writer anchors it first (current)
	}
	if st := s.clk.Load(); st != nil && st.anchor != m.anchor {
		return false
	}
	if moved := s.anchorMoved.Load(); moved == 0 || s.mono()-moved > int64(anchorMovedLately) {
		return true
	}
	boot, err := bootClock()
	return err != nil || at.UnixNano() <= m.anchor+int64(boot)+int64(clockSlack)
}

// anchorMovedLately is how long after this process took another anchor a
// decision is checked against the index's clock (decidedBy).
const anchorMovedLately = time.Minute

// clockSlack absorbs the rounding between the store's clock, advanced by
// the monotonic clock between readings of the boot clock, and the boot clock.
const clockSlack = time.Millisecond

// boot returns this boot's hash, never 0 (0 when there is no boot id).
func (s *Store) boot() uint64 {
	s.bootOnce.Do(func() {
		if id, err := bootID(); err == nil {
			sum := sha256.Sum256([]byte(id))
			s.bootHash = binary.LittleEndian.Uint64(sum[:8]) | 1
		}
	})
	return s.bootHash
}

// chooseAnchor returns the anchor for an index this process anchors: the
// one it validated for this boot if any; else the one its clock uses, or the
// wall clock's. With records (an index made anew), never later than latest
// − boot clock, so that no recorded deadline ends early (see above), even
// one written by a process that had taken an earlier anchor than this one
// validated. The caller holds s.mu.
func (s *Store) chooseAnchor(records bool) int64 {
	boot, err := bootClock()
	if err != nil {
		return s.last
	}
	a := s.wall().UnixNano() - int64(boot)
	if st := s.clk.Load(); st != nil && st.anchor != 0 {
		a = st.anchor
	}
	if s.lastSet {
		a = s.last
	}
	if records {
		if latest, ok := latestUpdate(s.dir); ok {
			a = min(a, latest-int64(boot))
		}
	}
	return a
}

// latestUpdate returns the latest updated_at of the directory's records, in
// Unix ns; records that cannot be read are left out.
func latestUpdate(dir string) (int64, bool) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var latest int64
	found := false
	for _, p := range paths {
		rec, err := readRecord(p)
		if err != nil || rec == nil {
			continue
		}
		if u := rec.UpdatedAt.UnixNano(); !found || u > latest {
			latest, found = u, true
		}
	}
	return latest, found
}
