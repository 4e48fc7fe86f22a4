package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// stepHook, when set (by tests only), is called after each step of a write
// with the step's name: "create", "write", "fsync", "close", "rename",
// "dirsync". Crash tests stop a writer there and kill it.
var stepHook func(step string)

func step(name string) {
	if stepHook != nil {
		stepHook(name)
	}
}

// Every step of a write is made in the state directory d as the writer
// opened it (change), by name: a write stays in the directory whose lock it
// holds and whose index it marks, even if the directory's path is made to
// name another meanwhile (removed or moved aside, and made anew).

// write durably replaces the circuit's record with data: a private
// temporary file in the directory is written, fsynced, closed and renamed
// over the record, and the directory is fsynced. The rename happens between
// the two marks of the circuit's counter c, the second with rec's mark. The
// caller holds the lock. It returns the counter the change was last marked
// in (marked) and its value after the change.
func (s *Store) write(ctx context.Context, d *dirFD, e *entry, c counter, rec *driver.Record, data []byte) (counter, uint64, error) {
	if err := s.temp(d, e, data); err != nil {
		return c, 0, err
	}
	c, seq, err := s.marked(ctx, d, e, c, markOf(rec), func() error {
		err := fault("rename", "rename", e.tempPath())
		if err == nil {
			err = d.rename(e.tempName(), e.recordName())
		}
		if err != nil {
			_ = d.remove(e.tempName())
			return fmt.Errorf("rename record: %w", err)
		}
		step("rename")
		return nil
	})
	if err != nil {
		return c, 0, err
	}
	if err := syncDir(d); err != nil {
		return c, 0, err // the record is replaced but may not survive a crash
	}
	step("dirsync")
	return c, seq, nil
}

// remove removes the circuit's record between the two marks of c, the
// second saying it was cleared. The caller holds the lock.
func (s *Store) remove(ctx context.Context, d *dirFD, e *entry, c counter) error {
	_, _, err := s.marked(ctx, d, e, c, markCleared, func() error {
		err := fault("remove", "remove", e.recordPath())
		if err == nil {
			err = d.remove(e.recordName())
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove record: %w", err)
		}
		_ = d.remove(e.tempName()) // a dead writer's, if any
		return nil
	})
	e.fast.Store(nil)
	if err != nil {
		return err
	}
	return syncDir(d)
}

// trial makes every step of a write but the rename: a temporary record is
// written, fsynced and removed, and the directory fsynced. The caller holds
// the lock.
func (s *Store) trial(d *dirFD, e *entry) error {
	if err := s.temp(d, e, []byte("{}\n")); err != nil {
		return err
	}
	if err := d.remove(e.tempName()); err != nil {
		return fmt.Errorf("remove temporary record: %w", err)
	}
	return syncDir(d)
}

// syncDir fsyncs the state directory, making renames and removals durable.
func syncDir(d *dirFD) error {
	err := fault("dirsync", "sync", d.path)
	if err == nil {
		err = d.sync()
	}
	if err != nil {
		return fmt.Errorf("fsync state directory: %w", err)
	}
	return nil
}

// marked runs change (a rename or removal of the record) between the two
// marks of the counter c, the second holding mark (what the change leaves;
// when the change fails, the mark the counter held before, the file being
// as the last change left it), and returns the counter the change was last
// marked in and its value after.
//
// The writer checked that c's index is the directory's before the change,
// but another process may replace the index meanwhile (it found it damaged)
// and read the record under the new one, as it was before the change: a
// copy that c's marks never reach. So once the change is made, the
// directory's index is looked at again (fstatat, in d); when it is another
// file than c's, the change is marked in it too (remarked). An index that
// replaces c's after that look is made after the change, and its readers
// read the changed file.
func (s *Store) marked(ctx context.Context, d *dirFD, e *entry, c counter, mark uint64, change func() error) (counter, uint64, error) {
	held := c.m.load(c.off)
	seq := c.begin()
	err := change()
	if err != nil && c.stable(held) {
		mark = markOfValue(held) // the file is as the last change left it
	}
	after := c.end(seq, mark)
	if err != nil {
		return c, 0, err
	}
	if id, err := d.id(indexName); err != nil || !sameFile(id, c.m.id) {
		return s.remarked(ctx, d, e, c, mark)
	}
	return c, after, nil
}

// remarked marks a change of the circuit, made with its counter in old, in
// the directory d's index, which is no longer old's file: it gives the
// circuit's counter there a new value holding mark, so that every copy of
// the record read under that index is dropped. When that index cannot be
// used, the write fails (the record is changed, but no process can be sure
// it sees it). The caller holds the circuit's lock.
func (s *Store) remarked(ctx context.Context, d *dirFD, e *entry, old counter, mark uint64) (counter, uint64, error) {
	m, err := s.current(ctx, needWrite)
	if err != nil {
		return old, 0, fmt.Errorf("the change index was replaced during the write, and the write could not be marked in the new one: %w", err)
	}
	if id, err := d.id(indexName); err != nil || !sameFile(id, m.id) {
		// Not errDirReplaced: the change is made, and must not be tried again.
		return old, 0, errors.New("the change index was replaced during the write, and the state directory's index is not the one this process maps: the write could not be marked in it")
	}
	c := e.counterIn(m, true)
	return c, c.end(c.begin(), mark), nil
}

// temp writes data to a new private temporary record, fsynced and closed.
// The temporary record of a circuit always has the same name,
// <key>.json.tmp-next: the caller holds the circuit's lock, so one found in
// the way is a dead writer's (or planted), and is removed, not followed,
// before the exclusive create is tried again. No directory scan is ever
// needed to sweep leftovers.
func (s *Store) temp(d *dirFD, e *entry, data []byte) error {
	tmp := e.tempName()
	var f *os.File
	err := fault("create", "open", e.tempPath())
	if err == nil {
		f, err = d.open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			if err = d.remove(tmp); err == nil {
				f, err = d.open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("create temporary record: %w", err)
	}
	step("create")
	err = writeSync(f, data)
	cerr := fault("close", "close", e.tempPath())
	if err := f.Close(); cerr == nil {
		cerr = err
	}
	if err == nil && cerr != nil {
		err = fmt.Errorf("close temporary record: %w", cerr)
	}
	if err != nil {
		_ = d.remove(tmp)
		return err
	}
	step("close")
	return nil
}

// writeSync writes data to f, sets 0600 whatever the umask, and fsyncs.
func writeSync(f *os.File, data []byte) error {
	err := fault("chmod", "chmod", f.Name())
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err != nil {
		return fmt.Errorf("chmod temporary record: %w", err)
	}
	if err = fault("write", "write", f.Name()); err == nil {
		_, err = f.Write(data)
	}
	if err != nil {
		return fmt.Errorf("write temporary record: %w", err)
	}
	step("write")
	if err = fault("fsync", "sync", f.Name()); err == nil {
		err = f.Sync()
	}
	if err != nil { // never retried: the page cache may have dropped the data
		return fmt.Errorf("fsync temporary record: %w", err)
	}
	step("fsync")
	return nil
}
