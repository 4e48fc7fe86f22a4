package filestore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// maxRecordSize bounds a record file. A record is a few hundred bytes (a
// name is at most 128); anything larger is corrupt, and is never read whole.
const maxRecordSize = 4096

// readRecord opens, checks and decodes the record at path, holding no file
// open afterwards; nil when absent.
func readRecord(path string) (*driver.Record, error) {
	// O_NONBLOCK: opening a FIFO planted as a record must not wait for a
	// writer; the check below refuses it. It changes nothing for regular
	// files.
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	return decodeFile(path, f, err)
}

// decodeFile checks and decodes the record file f at path, which it
// closes, as opened with the error err.
func decodeFile(path string, f *os.File, err error) (*driver.Record, error) {
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("record %s is a symlink: refused", path)
		}
		return nil, fmt.Errorf("open record: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat record: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("record %s is not a regular file: refused", path)
	}
	if err := checkOwner("record", path, fi); err != nil {
		return nil, err
	}
	if fi.Size() > maxRecordSize {
		return nil, fmt.Errorf("record %s: %w: %d bytes, more than a record's %d", path, driver.ErrCorrupt, fi.Size(), maxRecordSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRecordSize+1))
	if err != nil {
		return nil, fmt.Errorf("read record %s: %w", path, err)
	}
	if len(data) > maxRecordSize {
		return nil, fmt.Errorf("record %s: %w: more than a record's %d bytes", path, driver.ErrCorrupt, maxRecordSize)
	}
	rec, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("record %s: %w: %v", path, driver.ErrCorrupt, err)
	}
	if driver.Key(rec.Name)+".json" != filepath.Base(path) {
		return nil, fmt.Errorf("record %s: %w: it holds circuit %q", path, driver.ErrCorrupt, rec.Name)
	}
	return rec, nil
}
