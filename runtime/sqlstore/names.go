package sqlstore

import (
	"context"
	"errors"
	"fmt"
)

// Names returns the names of the circuits with a row in the circuits table,
// for operators' tools, in name order. Rows that cannot be read are left out
// and reported in the error, one joined error per row, each naming its row;
// the names of the others are returned all the same. The heartbeat rows of
// cached stores (beatPrefix) are not circuits and are left out.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT name FROM circuits WHERE substr(name, 1, 6) <> '"+beatPrefix+"' ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list circuits: %w", err)
	}
	var all []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlstore: list circuits: %w", err)
		}
		all = append(all, name)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("sqlstore: list circuits: %w", err)
	}
	var names []string
	var errs []error
	for _, name := range all {
		rec, _, err := s.Load(ctx, name)
		switch {
		case err != nil:
			errs = append(errs, err)
		case rec != nil:
			names = append(names, name)
		}
	}
	return names, errors.Join(errs...)
}
