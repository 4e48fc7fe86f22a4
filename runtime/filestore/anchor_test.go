//go:build linux

package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// TestIndexFromAnotherBootIsReanchored shows a reboot detected: an index
// whose header names another boot gets this boot's anchor from the next
// writer, taken from the wall clock.
func TestIndexFromAnotherBootIsReanchored(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	if err := os.WriteFile(filepath.Join(dir, indexName), newIndex(12345, old), 0o600); err != nil {
		t.Fatal(err)
	}
	s := openDir(t, dir)
	if ran, err := failN(t.Context(), circuit.New(s), "api", 1); ran != 1 || err != errBoom {
		t.Fatal(ran, err)
	}
	m := s.m.Load()
	boot, anchor := m.load(hdrBoot), m.load(hdrAnchor)
	if boot != s.boot() || int64(anchor) == old {
		t.Fatalf("header: boot %x anchor %v; want this boot's (%x), anchored anew", boot, time.Unix(0, int64(anchor)), s.boot())
	}
	if d := time.Since(s.Now()); d > time.Second || d < -time.Second {
		t.Fatalf("store clock is %v away from the wall clock", d)
	}
}

// TestIndexRemadeNeverClosesEarly: the index (and with it the
// anchor) removed within a boot, and made anew by a process whose wall
// clock stepped an hour ahead. The new anchor is no later than the lost
// one, so the circuit opened with a 10-minute cooldown stays open; the
// first process then takes the new index's anchor, so both agree.
func TestIndexRemadeNeverClosesEarly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	first := openDir(t, dir)
	if ran, _ := failN(ctx, circuit.New(first), "api", 3); ran != 3 {
		t.Fatal(ran)
	}
	if err := os.Remove(filepath.Join(dir, indexName)); err != nil {
		t.Fatal(err)
	}
	ahead := openDir(t, dir, WithWallClock(func() time.Time { return time.Now().Add(time.Hour) }))
	ran := false
	err := circuit.New(ahead).Run(ctx, "api", p3, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
	var open *circuit.OpenError
	if !errors.As(err, &open) || ran || open.RetryAfter() < 9*time.Minute {
		t.Fatalf("a process an hour ahead, after the index was made anew: %v (ran %v), want open for about 10 minutes", err, ran)
	}
	// The first process sees the index replaced at its next write (or
	// within recheck) and takes its anchor.
	if ran, err := failN(ctx, circuit.New(first), "other", 1); ran != 1 || err != errBoom {
		t.Fatal(ran, err)
	}
	if d := first.Now().Sub(ahead.Now()); d > 100*time.Millisecond || d < -100*time.Millisecond {
		t.Fatalf("the two processes' clocks differ by %v after the index was made anew", d)
	}
}

// TestPlantedClockFileIgnored: the clock file of earlier versions is no
// longer read, so a directory, FIFO or garbage planted as "clock" changes
// nothing: calls work and the clock follows the index's anchor.
func TestPlantedClockFileIgnored(t *testing.T) {
	for _, tt := range []struct {
		name  string
		plant func(path string) error
	}{
		{"Directory", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"Garbage", func(p string) error {
			return os.WriteFile(p, []byte(`{"v":1,"boot_id":"x","wall_at_boot":"1999-01-01T00:00:00Z"}`), 0o600)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := tt.plant(filepath.Join(dir, "clock")); err != nil {
				t.Fatal(err)
			}
			s := openDir(t, dir)
			if ran, err := failN(t.Context(), circuit.New(s), "api", 1); ran != 1 || err != errBoom {
				t.Fatal(ran, err)
			}
			if d := time.Since(s.Now()); d > time.Second || d < -time.Second {
				t.Fatalf("store clock is %v away from the wall clock", d)
			}
		})
	}
}

// TestOneProbeAcrossAnchors: two stores whose wall clocks differ by an hour
// race for the probe of a circuit whose cooldown has ended: exactly one
// runs, because both read the same anchor from the index.
func TestOneProbeAcrossAnchors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Minute}
	a := circuit.New(openDir(t, dir))
	b := circuit.New(openDir(t, dir, WithWallClock(func() time.Time { return time.Now().Add(-time.Hour) })))
	if err := a.Run(ctx, "api", p, func(context.Context) (circuit.Outcome, error) { return circuit.Failure, errBoom }); err != errBoom {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	release := make(chan struct{})
	results := make(chan bool, 2)
	for _, br := range []*circuit.Breaker{a, b} {
		go func() {
			ran := false
			_ = br.Run(ctx, "api", p, func(context.Context) (circuit.Outcome, error) { ran = true; <-release; return circuit.Success, nil })
			results <- ran
		}()
	}
	first := <-results // the rejected one returns first
	close(release)
	second := <-results
	if first == second {
		t.Fatalf("probes run: %v, %v; want exactly one", first, second)
	}
}

// TestAnchorChangedInPlace: the anchor in the index header made an hour
// later under a process that validated it, in place or by renaming a
// doctored copy over the index. At its next check the process reports the
// damage as a StateError, replaces the index with the anchor it validated
// (an hour later would end every recorded deadline an hour early), and
// carries on; a new process then agrees with it.
func TestAnchorChangedInPlace(t *testing.T) {
	for _, renamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "InPlace", true: "Renamed"}[renamed], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			ctx := t.Context()
			s, b, valid := openAPI(t, dir)
			index := filepath.Join(dir, indexName)
			target := index
			if renamed {
				data, err := os.ReadFile(index)
				if err != nil {
					t.Fatal(err)
				}
				target = index + ".copy"
				if err := os.WriteFile(target, data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			setAnchor(t, target, valid+int64(time.Hour))
			if renamed {
				if err := os.Rename(target, index); err != nil {
					t.Fatal(err)
				}
			}
			ran, err := failN(ctx, b, "other", 1) // a write checks the index at once
			var se *circuit.StateError
			if !errors.As(err, &se) || ran != 0 || !strings.Contains(err.Error(), "anchor") {
				t.Fatalf("first write after the anchor changed: %v (ran %d), want a StateError about the anchor", err, ran)
			}
			if ran, err := failN(ctx, b, "other", 1); ran != 1 || err != errBoom {
				t.Fatalf("next call: %v (ran %d)", err, ran)
			}
			if got := s.m.Load().anchor; !repaired(got, valid) {
				t.Fatalf("anchor after the repair: %v, want the validated %v, or less than a second earlier", time.Unix(0, got), time.Unix(0, valid))
			}
			fresh := openDir(t, dir)
			if snap, err := circuit.New(fresh).Snapshot(ctx, "api"); err != nil || snap.State != circuit.StateOpen {
				t.Fatalf("a new process: %+v, %v", snap, err)
			}
			if d := fresh.Now().Sub(s.Now()); d > 100*time.Millisecond || d < -100*time.Millisecond {
				t.Fatalf("a new process's clock differs by %v", d)
			}
		})
	}
}

// TestReplacedIndexLaterAnchorNewProcess: the index renamed over by a copy
// whose anchor is an hour later; a process that never mapped the index
// before finds the earlier anchor under the index's second name
// (index.keep), replaces the doctored index, and keeps the circuit open.
func TestReplacedIndexLaterAnchorNewProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	first := openDir(t, dir)
	if ran, _ := failN(ctx, circuit.New(first), "api", 3); ran != 3 {
		t.Fatal(ran)
	}
	valid := first.m.Load().anchor
	index := filepath.Join(dir, indexName)
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	later := uint64(valid + int64(time.Hour))
	binary.NativeEndian.PutUint64(data[hdrAnchor:], later)
	binary.NativeEndian.PutUint64(data[hdrCheck:], anchorCheck(binary.NativeEndian.Uint64(data[hdrBoot:]), later))
	if err := os.WriteFile(index+".copy", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(index+".copy", index); err != nil {
		t.Fatal(err)
	}
	fresh := openDir(t, dir)
	b := circuit.New(fresh)
	var last error
	for range 2 { // the first call may fail closed on the damage
		ran := false
		last = b.Run(ctx, "api", p3, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
		if ran {
			t.Fatalf("a new process ran a call on a circuit open for 10 minutes: the later anchor was taken")
		}
	}
	if !errors.Is(last, circuit.ErrOpen) {
		t.Fatalf("a new process's call: %v, want rejected as open", last)
	}
	if got := fresh.m.Load().anchor; !repaired(got, valid) {
		t.Fatalf("the new process's anchor: %v, want %v, or less than a second earlier", time.Unix(0, got), time.Unix(0, valid))
	}
}

// repaired reports whether an index repaired after its anchor was made
// later holds the validated anchor, or one earlier by less than the time
// since the last write (chooseAnchor): never a later one.
func repaired(got, valid int64) bool {
	return got <= valid && valid-got < int64(time.Second)
}

// TestDecisionByAnEarlierClockRedone: a decision made by this process's
// clock before it took an earlier anchor (the index header changed in place
// by an hour, and another of its goroutines noticed first) is not written:
// it would read the deadlines other processes write by the earlier anchor
// as ending an hour early. The write conflicts, and the store's clock then
// reads by the index's anchor.
func TestDecisionByAnEarlierClockRedone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	s := openDir(t, dir)
	if ran, _ := failN(ctx, circuit.New(s), "api", 1); ran != 1 {
		t.Fatal(ran)
	}
	prev, _, err := s.Load(ctx, "api")
	if err != nil || prev == nil {
		t.Fatalf("load: %v, %v", prev, err)
	}
	next := *prev
	next.Failures++
	next.Version++
	next.UpdatedAt = s.Now() // decided by the anchor the index has now
	valid := s.m.Load().anchor
	setAnchor(t, filepath.Join(dir, indexName), valid-int64(time.Hour))
	s.clk.Store(nil) // another goroutine's write noticed first, and reset the clock
	if err := s.Replace(ctx, "api", prev, &next); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("a decision made by the later anchor, written after the earlier was taken: %v, want ErrConflict", err)
	}
	if d := time.Since(s.Now()); d < 59*time.Minute {
		t.Fatalf("the store's clock after the conflict reads %v behind the wall clock, want the earlier anchor's hour", d)
	}
	next.UpdatedAt = s.Now()
	if err := s.Replace(ctx, "api", prev, &next); err != nil {
		t.Fatalf("the decision made again by the index's clock: %v", err)
	}
}

// TestUnrestoredKeepPoisoned: an index removed by hand whose second name,
// index.keep, holds a later anchor than the writer validated is not put
// back: the writer makes a new index, and first marks every counter of the
// old file, so that a process still mapping it drops its copies at once,
// not a second later, when it next checks its mapping.
func TestUnrestoredKeepPoisoned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	reader, writer := openDir(t, dir), openDir(t, dir)
	rb, wb := circuit.New(reader), circuit.New(writer)
	if ran, _ := failN(ctx, wb, "api", 1); ran != 1 {
		t.Fatal(ran)
	}
	if snap, err := rb.Snapshot(ctx, "api"); err != nil || snap.State != circuit.StateClosed {
		t.Fatalf("reader: %+v, %v", snap, err) // the reader now holds a copy
	}
	valid := writer.m.Load().anchor
	if err := os.Remove(filepath.Join(dir, indexName)); err != nil {
		t.Fatal(err)
	}
	setAnchor(t, filepath.Join(dir, indexKeepName), valid+int64(time.Hour))
	if ran, _ := failN(ctx, wb, "api", 2); ran != 2 { // the writer opens the circuit on a new index
		t.Fatalf("writer: %d of 2 calls ran", ran)
	}
	if snap, err := rb.Snapshot(ctx, "api"); err != nil || snap.State != circuit.StateOpen {
		t.Fatalf("reader right after the writer opened the circuit on a new index: %+v, %v; want open", snap, err)
	}
}

// openAPI opens a store on dir whose circuit "api" three failures opened
// (p3: for ten minutes), and returns it with its Breaker and the anchor it
// validated.
func openAPI(t *testing.T, dir string) (*Store, *circuit.Breaker, int64) {
	t.Helper()
	s := openDir(t, dir)
	b := circuit.New(s)
	if ran, _ := failN(t.Context(), b, "api", 3); ran != 3 {
		t.Fatal(ran)
	}
	return s, b, s.m.Load().anchor
}

// setAnchor writes anchor, and its check word, into the header of the index
// file at path, in place: the header another process would write, had it
// validated that anchor.
func setAnchor(t *testing.T, path string, anchor int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var boot [8]byte
	if _, err := f.ReadAt(boot[:], hdrBoot); err != nil {
		t.Fatal(err)
	}
	var words [16]byte
	binary.NativeEndian.PutUint64(words[:], uint64(anchor))
	binary.NativeEndian.PutUint64(words[8:], anchorCheck(binary.NativeEndian.Uint64(boot[:]), uint64(anchor)))
	if _, err := f.WriteAt(words[:], hdrAnchor); err != nil {
		t.Fatal(err)
	}
}

// TestAnchorForgedBeforeANewProcess: the anchor in the index header made an
// hour later in place, its check word left as it was, while no process
// maps the index. A process that never validated an anchor cannot tell it
// from the right one by its value; the check word tells it the header was
// changed in place. It replaces the index, with an anchor no later than
// the one the records were written by, and the circuit stays open.
func TestAnchorForgedBeforeANewProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	first := openDir(t, dir)
	if ran, _ := failN(ctx, circuit.New(first), "api", 3); ran != 3 {
		t.Fatal(ran)
	}
	valid := first.m.Load().anchor
	f, err := os.OpenFile(filepath.Join(dir, indexName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var word [8]byte
	binary.NativeEndian.PutUint64(word[:], uint64(valid+int64(time.Hour)))
	if _, err := f.WriteAt(word[:], hdrAnchor); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fresh := openDir(t, dir)
	b := circuit.New(fresh)
	var last error
	for range 2 { // the first call may fail closed on the damage
		ran := false
		last = b.Run(ctx, "api", p3, func(context.Context) (circuit.Outcome, error) { ran = true; return circuit.Success, nil })
		if ran {
			t.Fatalf("a new process ran a call on a circuit open for 10 minutes: the forged anchor was taken")
		}
	}
	if !errors.Is(last, circuit.ErrOpen) {
		t.Fatalf("a new process's call: %v, want rejected as open", last)
	}
	if got := fresh.m.Load().anchor; got > valid {
		t.Fatalf("the new process's anchor: %v, later than the records' %v", time.Unix(0, got), time.Unix(0, valid))
	}
}

func init() {
	// callapi: one call on "api" (p3) that succeeds if it runs; says its
	// outcome.
	helperScripts["callapi"] = func() error {
		s, err := Open(os.Getenv(envDir))
		if err != nil {
			return err
		}
		err = circuit.New(s).Run(context.Background(), "api", p3, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
		say("%s", outcome(err))
		return nil
	}
}

// TestLaterAnchorRepairedWhenFull: the header's anchor made an hour later
// in place while the file system has room for records but not for a new
// index. The process that validated the anchor cannot replace the index;
// it puts its anchor back in the header instead, so that a new process,
// which takes the header's anchor, does not see a circuit's ten-minute
// cooldown as over and probe it (a real process, on a real tmpfs).
func TestLaterAnchorRepairedWhenFull(t *testing.T) {
	mnt := t.TempDir()
	mountOrSkip(t, "tmpfs", mnt, "tmpfs", 0, "size=512k,mode=0700")
	dir := filepath.Join(mnt, "state")
	ctx := t.Context()
	_, b, valid := openAPI(t, dir)
	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for chunk := make([]byte, 4096); ; size += 4096 {
		if _, err := filler.Write(chunk); err != nil {
			break
		}
	}
	if err := filler.Truncate(size - 32<<10); err != nil { // room for records, not for an index
		t.Fatal(err)
	}
	filler.Close()
	setAnchor(t, filepath.Join(dir, indexName), valid+int64(time.Hour))
	ran, err := failN(ctx, b, "other", 1) // a write checks the index at once
	var se *circuit.StateError
	if !errors.As(err, &se) || ran != 0 {
		t.Fatalf("a write after the anchor moved later, with no room for a new index: %v (ran %d), want a StateError", err, ran)
	}
	sc := startScript(t, "callapi", dir, "", nil, "")
	got := sc.next(t)
	sc.wait(t)
	if got != "open" {
		t.Fatalf("a new process's call on a circuit open for ten minutes more: %s, want rejected", got)
	}
}

// TestClockKeepsAnchorWhileIndexUnusable: the index's anchor an hour
// earlier than the wall clock's (taken, as an earlier anchor is), then its
// header made later still in place, so that the index cannot be used to
// read the clock until it is repaired. The store's clock keeps the anchor
// this process validated, where it once fell back to the wall clock's, an
// hour ahead: every cooldown recorded by the index's clock would have
// looked over.
func TestClockKeepsAnchorWhileIndexUnusable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, _, valid := openAPI(t, dir)
	index := filepath.Join(dir, indexName)
	setAnchor(t, index, valid-int64(time.Hour))
	s.clk.Store(nil)
	s.due() // the recheck's timer
	if d := time.Since(s.Now()); d < 59*time.Minute {
		t.Fatalf("the earlier anchor was not taken: the clock reads %v behind the wall clock", d)
	}
	setAnchor(t, index, valid+int64(time.Hour))
	s.clk.Store(nil)
	s.due()
	if d := time.Since(s.Now()); d < 59*time.Minute {
		t.Fatalf("with the index unusable, the clock reads %v behind the wall clock, want the validated anchor's hour", d)
	}
}

// TestRacingDecisionByAWrongClockRedone: decisions made by a clock an hour
// ahead of the index's (a goroutine read the clock while it was wrong);
// the first to be written is refused and resets the clock; another
// decision made by the same wrong clock, written after the clock was read
// afresh, is refused too: a write checks the decision's time against the
// index's clock for a while after the process found its clock wrong.
func TestRacingDecisionByAWrongClockRedone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	s, b, _ := openAPI(t, dir)
	if ran, _ := failN(ctx, b, "other", 1); ran != 1 {
		t.Fatal(ran)
	}
	good := s.Now()
	wrong := &clockState{anchor: s.clk.Load().anchor + int64(time.Hour), boot: s.clk.Load().boot, mono: s.clk.Load().mono}
	s.clk.Store(wrong)
	decide := func(name string) (prev, next *driver.Record) {
		prev, _, err := s.Load(ctx, name)
		if err != nil || prev == nil {
			t.Fatalf("load %s: %v, %v", name, prev, err)
		}
		n := *prev
		n.Version++
		n.UpdatedAt = s.Now() // by the wrong clock
		return prev, &n
	}
	p1, n1 := decide("other")
	p2, n2 := decide("api")
	if n2.UpdatedAt.Sub(good) < 59*time.Minute {
		t.Fatalf("the wrong clock reads %v", n2.UpdatedAt.Sub(good))
	}
	if err := s.Replace(ctx, "other", p1, n1); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("the first decision by the wrong clock: %v, want ErrConflict", err)
	}
	if d := s.Now().Sub(good); d > time.Minute {
		t.Fatalf("the clock read afresh is %v ahead, want the index's", d)
	}
	if err := s.Replace(ctx, "api", p2, n2); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("the racing decision by the wrong clock, written after the clock was read afresh: %v, want ErrConflict", err)
	}
}
