//go:build linux

package filestore

// The change index damaged, cut short or replaced while writers and readers
// go on, each case reproduced first: every change a writer makes reaches
// every copy another process holds, whichever index the copy was read
// under and whatever room the file system has left.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TestUnwrittenCopyAfterFullReplacement: a reader's copy of a closed
// record read under a new index (made after the record was written), before
// any writer changed the circuit there, is vouched for by a counter that
// still reads zero. That index is then cut short (replaced by a short
// copy) and replaced on a tmpfs
// with room for the new index but for nothing more, so the old file's
// counters cannot be marked; once there is room again, a page of the old
// file read anew reads zero too. The reader's call on the circuit, opened
// in the newest index, must be rejected.
func TestUnwrittenCopyAfterFullReplacement(t *testing.T) {
	mnt := t.TempDir()
	mountOrSkip(t, "tmpfs", mnt, "tmpfs", 0, "size=512k,mode=0700")
	dir := filepath.Join(mnt, "state")
	ctx := t.Context()
	writer, reader := openDir(t, dir), openDir(t, dir)
	wb, rb := circuit.New(writer), circuit.New(reader)
	if ran, _ := failN(ctx, wb, "api", 1); ran != 1 {
		t.Fatal(ran)
	}
	index := filepath.Join(dir, indexName)
	replace := func() { // the writer's call finds the index cut short, and replaces it
		t.Helper()
		if ran, err := failN(ctx, wb, "api", 1); ran != 0 || !errors.As(err, new(*circuit.StateError)) {
			t.Fatalf("the writer's call that finds the damage: %v (ran %d), want a StateError before running", err, ran)
		}
	}
	cutIndex(t, index, headerSize, writer)
	replace() // a new index, under which the circuit is not changed yet
	if snap, err := rb.Snapshot(ctx, "api"); err != nil || snap.State != circuit.StateClosed || snap.Failures != 1 {
		t.Fatalf("reader: %+v, %v", snap, err)
	}
	cutIndex(t, index, headerSize, writer)
	filler := fill(t, mnt, indexSize) // room for a new index, not a page more
	replace()
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if ran, _ := failN(ctx, wb, "api", 2); ran != 2 {
		t.Fatal(ran)
	}
	if wsnap, _ := wb.Snapshot(ctx, "api"); wsnap.State != circuit.StateOpen {
		t.Fatalf("writer: %+v, want open", wsnap)
	}
	err := rb.Run(ctx, "api", p3, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
	if !errors.Is(err, circuit.ErrOpen) {
		t.Fatalf("reader's call after the writer opened the circuit in the newest index: %v, want rejected as open", err)
	}
}

// TestSparseIndexReplacedOnFullFileSystem: an index with holes (cut short
// and extended again, its header whole: outside the model) replaced on a
// tmpfs with room for the new index but for none of the old one's holes,
// which marking every counter of the old file would fill, and fault. The
// writer does not mark a file with holes, and lives; another process's
// copy, read by a counter after a hole, is dropped at its recheck: its
// call on the circuit, opened in the new index, is rejected.
func TestSparseIndexReplacedOnFullFileSystem(t *testing.T) {
	mnt := t.TempDir()
	mountOrSkip(t, "tmpfs", mnt, "tmpfs", 0, "size=512k,mode=0700")
	dir := filepath.Join(mnt, "state")
	ctx := t.Context()
	page := os.Getpagesize()
	name := ""
	for i := 0; name == ""; i++ { // a circuit whose slot is after the first page of slots
		n := fmt.Sprintf("api-%d", i)
		if home := int(tagOf(sha256.Sum256([]byte(n)))>>1) % slotCount; home*slotSize >= page {
			name = n
		}
	}
	writer, reader := openDir(t, dir), openDir(t, dir)
	wb, rb := circuit.New(writer), circuit.New(reader)
	if ran, _ := failN(ctx, wb, name, 1); ran != 1 {
		t.Fatal(ran)
	}
	index := filepath.Join(dir, indexName)
	if err := os.Truncate(index, headerSize); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(index, indexSize); err != nil {
		t.Fatal(err)
	}
	if ran, _ := failN(ctx, wb, name, 1); ran != 1 {
		t.Fatal(ran)
	}
	if snap, err := rb.Snapshot(ctx, name); err != nil || snap.State != circuit.StateClosed || snap.Failures != 2 {
		t.Fatalf("reader: %+v, %v", snap, err)
	}
	filler := fill(t, mnt, indexSize)                            // room for a new index, not a page more
	setAnchor(t, index, writer.m.Load().anchor+int64(time.Hour)) // damage that takes no room
	if ran, err := failN(ctx, wb, name, 1); ran != 1 || !errors.As(err, new(*circuit.StateError)) {
		t.Fatalf("the writer's call that finds the damage: %v (ran %d), want a StateError", err, ran)
	}
	if fi, err := os.Stat(index); err != nil || identify(fi) == reader.m.Load().id {
		t.Fatalf("the index was not replaced: %v", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// The failure whose settlement was refused is written once there is
	// room: it is the third, and opens the circuit.
	time.Sleep(owedRetry)
	if ran, err := failN(ctx, wb, name, 1); ran != 0 || !errors.As(err, new(*circuit.OpenError)) {
		t.Fatalf("once there is room: %d ran, %v; want an OpenError", ran, err)
	}
	if wsnap, _ := wb.Snapshot(ctx, name); wsnap.State != circuit.StateOpen {
		t.Fatalf("writer: %+v, want open", wsnap)
	}
	reader.due() // its recheck, within a second
	err := rb.Run(ctx, name, p3, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
	if !errors.Is(err, circuit.ErrOpen) {
		t.Fatalf("reader's call after the writer opened the circuit in the new index: %v, want rejected as open", err)
	}
}

// cutIndex replaces the index by a copy of its first size bytes, renamed
// over it (truncating the file in place would kill every process using it:
// outside the model), and marks the mapping of each of stores due for its
// check, as its recheck does within a second: so their next call finds the
// damage.
func cutIndex(t *testing.T, index string, size int64, stores ...*Store) {
	t.Helper()
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	tmp := index + ".cut"
	if err := os.WriteFile(tmp, data[:min(size, int64(len(data)))], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, index); err != nil {
		t.Fatal(err)
	}
	for _, s := range stores {
		s.due()
	}
}

// fill fills the file system mounted at mnt until leave bytes are free, and
// returns the filler's path.
func fill(t *testing.T, mnt string, leave int64) string {
	t.Helper()
	path := filepath.Join(mnt, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := int64(os.Getpagesize())
	var size int64
	for chunk := make([]byte, page); ; size += page {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	if err := f.Truncate(size - leave); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestIndexReplacedDuringWrite: a writer checks that its mapping is the
// directory's index, then, before it renames its record, another process
// finds the index damaged (truncated) and replaces it, and reads the
// circuit under the new index. The writer's change, made in the old index,
// must still reach that process's copy.
func TestIndexReplacedDuringWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	writer, reader := openDir(t, dir), openDir(t, dir)
	wb, rb := circuit.New(writer), circuit.New(reader)
	if ran, _ := failN(ctx, wb, "api", 2); ran != 2 {
		t.Fatal(ran)
	}
	if snap, err := rb.Snapshot(ctx, "api"); err != nil || snap.State != circuit.StateClosed {
		t.Fatalf("reader: %+v, %v", snap, err)
	}
	index := filepath.Join(dir, indexName)
	replaced := false
	stepHook = func(step string) {
		if step != "close" || replaced {
			return
		}
		replaced = true
		cutIndex(t, index, headerSize, reader)
		if _, err := rb.Snapshot(ctx, "api"); err == nil {
			t.Error("reader: no error on a damaged index")
		}
		if snap, err := rb.Snapshot(ctx, "api"); err != nil || snap.State != circuit.StateClosed {
			t.Errorf("reader on the new index: %+v, %v", snap, err)
		}
	}
	defer func() { stepHook = nil }()
	if ran, _ := failN(ctx, wb, "api", 1); ran != 1 {
		t.Fatal(ran)
	}
	stepHook = nil
	if !replaced {
		t.Fatal("the index was not replaced during the write")
	}
	if wsnap, _ := wb.Snapshot(ctx, "api"); wsnap.State != circuit.StateOpen {
		t.Fatalf("writer: %+v, want open", wsnap)
	}
	err := rb.Run(ctx, "api", p3, func(ctx2 context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
	if !errors.Is(err, circuit.ErrOpen) {
		t.Fatalf("reader's call after the writer opened the circuit: %v, want rejected as open", err)
	}
}

// TestSlotTagLostUnderWriter: the index cut short and extended again, its
// header whole, so still a usable index, but every slot's tag gone. A
// writer that found its circuit's slot before goes on changing it; another
// process, which finds the slot free now, reads the circuit by its spill
// counter. The writer's changes must reach that process's copy.
func TestSlotTagLostUnderWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	writer := openDir(t, dir)
	wb := circuit.New(writer)
	if ran, _ := failN(ctx, wb, "api", 1); ran != 1 {
		t.Fatal(ran)
	}
	index := filepath.Join(dir, indexName)
	if err := os.Truncate(index, headerSize); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(index, indexSize); err != nil {
		t.Fatal(err)
	}
	rb := circuit.New(openDir(t, dir))
	if snap, err := rb.Snapshot(ctx, "api"); err != nil || snap.State != circuit.StateClosed {
		t.Fatalf("reader: %+v, %v", snap, err)
	}
	if ran, _ := failN(ctx, wb, "api", 2); ran != 2 {
		t.Fatal(ran)
	}
	if wsnap, _ := wb.Snapshot(ctx, "api"); wsnap.State != circuit.StateOpen {
		t.Fatalf("writer: %+v, want open", wsnap)
	}
	err := rb.Run(ctx, "api", p3, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil })
	if !errors.Is(err, circuit.ErrOpen) {
		t.Fatalf("reader's call after the writer opened the circuit: %v, want rejected as open", err)
	}
}

// TestFailedRenameKeepsMark: a write whose rename fails leaves the record
// as it was; the counter's mark must say so, or every process reading the
// file takes the record for one put back behind the store's back, and the
// circuit for lost.
func TestFailedRenameKeepsMark(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	ctx := t.Context()
	writer, reader := openDir(t, dir), openDir(t, dir)
	wb, rb := circuit.New(writer), circuit.New(reader)
	var losses int
	reader.Notify(func(error) { losses++ })
	if ran, _ := failN(ctx, wb, "api", 1); ran != 1 {
		t.Fatal(ran)
	}
	faultHook = func(op string) error {
		if op == "rename" {
			return syscall.EIO
		}
		return nil
	}
	ran, err := failN(ctx, wb, "api", 1)
	faultHook = nil
	if ran != 1 || !errors.As(err, new(*circuit.StateError)) {
		t.Fatalf("the write whose rename fails: %v (ran %d), want a StateError", err, ran)
	}
	snap, err := rb.Snapshot(ctx, "api")
	if err != nil || snap.State != circuit.StateClosed || snap.Failures != 1 || losses != 0 {
		t.Fatalf("reader after the failed rename: %+v, %v, %d losses; want closed with 1 failure, no loss", snap, err, losses)
	}
}
