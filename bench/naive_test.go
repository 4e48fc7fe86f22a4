package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// naiveStore is the reference design taken literally, as the baseline the
// file store has to beat: every Load takes the circuit's flock (opening the
// lock file, as the reference does on every call) and reads and decodes the
// record file under it; every Replace takes the lock, reads and compares the
// record, and replaces it durably with rawReplace. It keeps nothing in
// memory between calls. It is honest but not hardened: no symlink or
// permission checks and no crash sweeping, which would only make it slower.
type naiveStore struct {
	dir string
}

var _ circuit.Store = (*naiveStore)(nil)

// naiveRecord is the naive store's JSON form of a record.
type naiveRecord struct {
	V           int       `json:"v"`
	Name        string    `json:"name"`
	State       string    `json:"state"`
	Failures    int       `json:"failures"`
	Generation  uint64    `json:"generation"`
	Incarnation string    `json:"incarnation"`
	Version     uint64    `json:"version"`
	OpenUntil   time.Time `json:"open_until,omitzero"`
	ProbeToken  string    `json:"probe_token,omitempty"`
	LeaseUntil  time.Time `json:"lease_until,omitzero"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// paths returns the circuit's record and lock files.
func (s *naiveStore) paths(name string) (record, lock string) {
	k := circuit.Key(name)
	return filepath.Join(s.dir, k+".json"), filepath.Join(s.dir, k+".lock")
}

// locked runs fn on the circuit's record path holding its flock. The lock
// is blocking, as PHP's flock(LOCK_EX) is; it does not poll.
func (s *naiveStore) locked(name string, fn func(record string) error) error {
	record, lock := s.paths(name)
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	fl := flock.New(lock, flock.SetPermissions(0o600))
	if err := fl.Lock(); err != nil {
		_ = fl.Close()
		return fmt.Errorf("lock %s: %w", lock, err)
	}
	err := fn(record)
	if cerr := fl.Close(); err == nil { // Close unlocks
		err = cerr
	}
	return err
}

// read reads and decodes the record at path; nil when there is none.
func (s *naiveStore) read(path string) (*driver.Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f naiveRecord
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", driver.ErrCorrupt, err)
	}
	state, err := driver.ParseState(f.State)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", driver.ErrCorrupt, err)
	}
	r := &driver.Record{
		Name: f.Name, State: state, Failures: f.Failures, Generation: f.Generation,
		Incarnation: f.Incarnation, Version: f.Version, OpenUntil: f.OpenUntil,
		ProbeToken: f.ProbeToken, LeaseUntil: f.LeaseUntil, UpdatedAt: f.UpdatedAt,
	}
	if err := r.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", driver.ErrCorrupt, err)
	}
	return r, nil
}

// Load reads the record under the lock. Its time is the zero Time: the
// Breaker uses the wall clock.
func (s *naiveStore) Load(_ context.Context, name string) (rec *driver.Record, _ time.Time, err error) {
	err = s.locked(name, func(path string) error {
		rec, err = s.read(path)
		return err
	})
	return rec, time.Time{}, err
}

// Replace compares and durably replaces the record under the lock.
func (s *naiveStore) Replace(_ context.Context, name string, prev, next *driver.Record) error {
	return s.locked(name, func(path string) error {
		cur, err := s.read(path)
		if err != nil {
			return err
		}
		if !driver.SameRevision(cur, prev) {
			return driver.ErrConflict
		}
		data, err := json.Marshal(naiveRecord{
			V: 1, Name: next.Name, State: next.State.String(), Failures: next.Failures,
			Generation: next.Generation, Incarnation: next.Incarnation, Version: next.Version,
			OpenUntil: next.OpenUntil, ProbeToken: next.ProbeToken, LeaseUntil: next.LeaseUntil,
			UpdatedAt: next.UpdatedAt,
		})
		if err != nil {
			return err
		}
		return rawReplace(s.dir, path, data)
	})
}

// Delete removes the record under the lock.
func (s *naiveStore) Delete(_ context.Context, name string) error {
	return s.locked(name, func(path string) error {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}

// rawReplace durably replaces the file at path with data, and nothing more:
// a private temporary file in dir (O_EXCL, 0600) is written, fsynced,
// closed and renamed over path, and dir is fsynced. It is the baseline of
// every benchmark that writes.
func rawReplace(dir, path string, data []byte) error {
	f, err := os.CreateTemp(dir, ".raw-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
