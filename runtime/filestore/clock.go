package filestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The file store's clock is the kernel's boot clock (CLOCK_BOOTTIME), which
// every process on the server shares and which no wall-clock step moves,
// so a step of the wall clock cannot stretch or cut short a cooldown or a
// lease. To keep recorded times readable, the boot clock is anchored to the
// wall clock once per boot: the first writer after a boot records, in the
// state directory's clock file, the boot's id and the wall-clock time at
// which the boot clock read zero; every process using the directory adds the
// boot clock to that anchor. A reboot changes the boot id and the anchor is
// taken again, so deadlines recorded before the reboot keep their wall-clock
// meaning.
//
// Between reads of the boot clock a process advances it with its monotonic
// clock (no system call), reading it afresh every clockResync.

const (
	clockName   = "clock"
	clockResync = time.Second
	bootIDPath  = "/proc/sys/kernel/random/boot_id"
)

// anchor ties the boot clock to the wall clock for one boot.
type anchor struct {
	BootID string    `json:"boot_id"`
	Wall   time.Time `json:"wall_at_boot"` // the wall clock when the boot clock read zero
}

// clockFile is the clock file's JSON form.
type clockFile struct {
	V int `json:"v"`
	anchor
}

// bootClock reads CLOCK_BOOTTIME.
func bootClock() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, fmt.Errorf("read boot clock: %w", err)
	}
	return time.Duration(ts.Nano()), nil
}

// readBootID returns this boot's id.
func readBootID() (string, error) {
	b, err := os.ReadFile(bootIDPath)
	if err != nil {
		return "", fmt.Errorf("read boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// clockState is a process's reading of the store's clock.
type clockState struct {
	anchor  anchor
	persist bool          // the anchor is the one in the clock file
	boot    time.Duration // the boot clock at mono
	mono    time.Time     // a monotonic reading
}

// now returns the store's time from st.
func (st *clockState) now() time.Time {
	return st.anchor.Wall.Add(st.boot + time.Since(st.mono))
}

// Now returns the store's time: the boot clock, anchored for this boot in
// the state directory. The Breaker calls it when a decision needs the time.
func (s *Store) Now() time.Time {
	if st := s.clk.Load(); st != nil {
		if since := time.Since(st.mono); since < clockResync { // monotonic: no system call
			return st.anchor.Wall.Add(st.boot + since)
		}
	}
	return s.syncClock(false).now()
}

// syncClock reads the boot clock and, when needed, the anchor. With persist
// (writers), an anchor that is not yet in the clock file is written there,
// unless another process wrote one first, which then stands.
func (s *Store) syncClock(persist bool) *clockState {
	s.clkMu.Lock()
	defer s.clkMu.Unlock()
	boot, err := bootClock()
	mono := time.Now()
	if err != nil {
		// No boot clock (not Linux?): the wall clock, anchored at zero.
		st := &clockState{anchor: anchor{Wall: time.Unix(0, 0)}, persist: true, boot: time.Duration(s.wall().UnixNano()), mono: mono}
		s.clk.Store(st)
		return st
	}
	old := s.clk.Load()
	st := &clockState{boot: boot, mono: mono}
	switch {
	case old != nil && old.persist:
		st.anchor, st.persist = old.anchor, old.persist
	default:
		st.anchor, st.persist = s.loadAnchor(boot, persist)
	}
	s.clk.Store(st)
	return st
}

// loadAnchor returns this boot's anchor from the clock file, or a new one
// taken from the wall clock, which it writes to the file when persist is
// set. It reports whether the anchor is the file's.
func (s *Store) loadAnchor(boot time.Duration, persist bool) (anchor, bool) {
	id, err := readBootID()
	if err != nil {
		return anchor{Wall: s.wall().Add(-boot)}, false
	}
	path := filepath.Join(s.dir, clockName)
	if a, err := readAnchor(path); err == nil && a.BootID == id {
		return a, true
	}
	fresh := anchor{BootID: id, Wall: s.wall().Add(-boot).UTC()}
	if !persist {
		return fresh, false
	}
	if err := writeAnchor(s.dir, path, fresh); err != nil {
		return fresh, false
	}
	if a, err := readAnchor(path); err == nil && a.BootID == id {
		return a, true // ours, or a faster process's
	}
	return fresh, false
}

func readAnchor(path string) (anchor, error) {
	// O_NONBLOCK and the check below: a FIFO planted as the clock file
	// must not block every writer waiting for data.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return anchor{}, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return anchor{}, fmt.Errorf("clock file %s is not a regular file", path)
	}
	var c clockFile
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return anchor{}, fmt.Errorf("clock file %s: %w", path, err)
	}
	if c.V != 1 || c.BootID == "" || c.Wall.IsZero() {
		return anchor{}, fmt.Errorf("clock file %s: unknown format", path)
	}
	return c.anchor, nil
}

// writeAnchor puts a into the clock file: linked into place when there is
// none (the first process wins), renamed over one from an earlier boot.
func writeAnchor(dir, path string, a anchor) error {
	data, err := json.Marshal(clockFile{V: 1, anchor: a})
	if err != nil {
		return err
	}
	tmp, err := writeWhole(dir, ".clock-*", append(data, '\n'))
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, path)
	if errors.Is(err, fs.ErrExist) {
		if cur, rerr := readAnchor(path); rerr == nil && cur.BootID == a.BootID {
			return nil // another process anchored this boot first
		}
		err = os.Rename(tmp, path) // an earlier boot's, or unreadable
	}
	return err
}
