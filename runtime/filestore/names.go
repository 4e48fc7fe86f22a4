package filestore

import (
	"context"
	"errors"
	"path/filepath"
)

// Names returns the names of the circuits with a record in the store, for
// operators' tools; file names are hashes, so it reads each record, one
// file open at a time. Records that cannot be read are left out and
// reported in the error, one joined error per file, each naming its file;
// the names of the others are returned all the same.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	if err := s.checkDir(false); err != nil {
		if errors.Is(err, errNoDir) {
			return nil, nil
		}
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(s.dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var names []string
	var errs []error
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return names, err
		}
		rec, err := readRecord(p)
		switch {
		case err != nil:
			errs = append(errs, err)
		case rec != nil:
			names = append(names, rec.Name)
		}
	}
	return names, errors.Join(errs...)
}
