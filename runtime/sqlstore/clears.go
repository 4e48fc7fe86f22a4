package sqlstore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/jackc/pgx/v5/pgconn"
)

// A database migrated before circuit_clears existed has no such table:
// until Migrate makes it, the store works as it did without it (a Clear
// deletes the row; an absent row reads as cleared, so a row deleted behind
// the store's back is not told from a Clear) and reports once, through its
// Notify functions, that the table is missing. A store that found the
// table missing does not look for it again: a process started after
// Migrate uses it.

// clears reports whether the store uses circuit_clears.
func (s *Store) clears() bool { return !s.noClears.Load() }

// withoutClears reports whether err says that circuit_clears is missing;
// if so, the store stops using it, and the first time reports it.
func (s *Store) withoutClears(err error) bool {
	if !missingClears(err) {
		return false
	}
	if !s.noClears.Swap(true) {
		s.reports.Send(fmt.Errorf("%w: sqlstore: the table circuit_clears is missing: run Migrate; until this process restarts after it, a row deleted behind the store's back reads as a Clear (%v)",
			driver.ErrUnsafe, err))
	}
	return true
}

// missingClears reports whether err is the database's error for a
// missing circuit_clears table.
func missingClears(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "42P01" && strings.Contains(pe.Message, "circuit_clears")
	}
	msg := err.Error()
	return strings.Contains(msg, "no such table") && strings.Contains(msg, "circuit_clears")
}
