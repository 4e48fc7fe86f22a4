package sqlstore

import (
	"fmt"
	"time"
)

// Dialect is the SQL dialect of a database.
type Dialect int

const (
	// Postgres is PostgreSQL, through github.com/jackc/pgx/v5/stdlib.
	Postgres Dialect = iota + 1
	// SQLite is SQLite, through modernc.org/sqlite.
	SQLite
)

// String returns "postgres" or "sqlite".
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case SQLite:
		return "sqlite"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// DialectOf returns the dialect of a database/sql driver name: "pgx" or
// "postgres" for PostgreSQL, "sqlite" or "sqlite3" for SQLite.
func DialectOf(driverName string) (Dialect, error) {
	switch driverName {
	case "pgx", "pgx/v5", "postgres", "postgresql":
		return Postgres, nil
	case "sqlite", "sqlite3":
		return SQLite, nil
	}
	return 0, fmt.Errorf("sqlstore: unknown driver %q (want pgx or sqlite)", driverName)
}

// schema returns the statement that creates the circuits table.
func (d Dialect) schema() string {
	id, ts := "INTEGER PRIMARY KEY AUTOINCREMENT", "TEXT" // SQLite keeps times as RFC 3339 text
	if d == Postgres {
		id, ts = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "TIMESTAMPTZ"
	}
	return `CREATE TABLE IF NOT EXISTS circuits (
	id            ` + id + `,
	name          TEXT    NOT NULL UNIQUE,
	state         TEXT    NOT NULL DEFAULT 'closed',
	failure_count INTEGER NOT NULL DEFAULT 0,
	generation    BIGINT  NOT NULL,
	incarnation   TEXT    NOT NULL,
	version       BIGINT  NOT NULL,
	open_until    ` + ts + `,
	probe_token   TEXT,
	lease_until   ` + ts + `,
	updated_at    ` + ts + ` NOT NULL,
	policy_state  TEXT
)`
}

// addPolicyState adds the policy_state column to a circuits table created
// before it existed. SQLite has no ADD COLUMN IF NOT EXISTS: its error for
// a column that exists already is expected (duplicateColumn).
func (d Dialect) addPolicyState() string {
	if d == Postgres {
		return "ALTER TABLE circuits ADD COLUMN IF NOT EXISTS policy_state TEXT"
	}
	return "ALTER TABLE circuits ADD COLUMN policy_state TEXT"
}

// columns are the record's columns, in the order of every statement.
const columns = "c.name, c.state, c.failure_count, c.generation, c.incarnation, c.version, c.open_until, c.probe_token, c.lease_until, c.updated_at, c.policy_state"

// inRecovery is true on a PostgreSQL standby (ErrStandby).
func (d Dialect) inRecovery() string {
	if d == Postgres {
		return "pg_is_in_recovery()"
	}
	return "0"
}

// checkQuery is Check's: whether the server is a standby, and whether the
// circuits table exists (on the search_path, on PostgreSQL).
func (d Dialect) checkQuery() string {
	table := "to_regclass('circuits') IS NOT NULL"
	if d == SQLite {
		table = "EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'circuits')"
	}
	return "SELECT " + d.inRecovery() + ", " + table
}

// loadQuery selects the database's time (PostgreSQL; NULL on SQLite) and
// the row, if any: the LEFT JOIN yields one row either way.
// Its column after the row's says whether the circuit was cleared; without
// circuit_clears (a database not migrated since it was added), every
// absent row reads as cleared. The last says whether the server is a
// standby (ErrStandby).
func (d Dialect) loadQuery(clears bool) string {
	now := "NULL"
	if d == Postgres {
		now = "now()"
	}
	cleared := "1 = 1"
	if clears {
		cleared = "EXISTS (SELECT 1 FROM circuit_clears AS k WHERE k.name = $1)"
	}
	return "SELECT " + now + ", c.id, " + columns + ", " + cleared + ", " + d.inRecovery() +
		" FROM (SELECT 1) AS one LEFT JOIN circuits AS c ON c.name = $1"
}

// A circuit's row, once written, is gone again only after a Clear, which
// leaves the circuit's name in circuit_clears until a row is written again
// (insertStmt). So a process that last found a row, and then finds neither
// a row nor a clear, knows the row was lost: deleted by hand, the table
// truncated, the database recreated (cache.go, lost).
const clearsSchema = `CREATE TABLE IF NOT EXISTS circuit_clears (name TEXT PRIMARY KEY)`

// clearsTrigger removes a circuit's clear when its row is written again, on
// SQLite, whose statements cannot do both (PostgreSQL's insertStmt does).
const clearsTrigger = `CREATE TRIGGER IF NOT EXISTS circuitgen_unclear AFTER INSERT ON circuits
BEGIN DELETE FROM circuit_clears WHERE name = NEW.name; END`

// insertStmt is the statement that writes a circuit's first row: on
// PostgreSQL it also removes the circuit's clear.
func (d Dialect) insertStmt(clears bool) string {
	if d == Postgres && clears {
		return "WITH k AS (DELETE FROM circuit_clears WHERE name = $1) " + insertRow
	}
	return insertRow
}

const insertRow = `INSERT INTO circuits (name, state, failure_count, generation, incarnation, version, open_until, probe_token, lease_until, updated_at, policy_state)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (name) DO NOTHING`

const updateStmt = `UPDATE circuits SET state = $4, failure_count = $5, generation = $6, incarnation = $7, version = $8,
	open_until = $9, probe_token = $10, lease_until = $11, updated_at = $12, policy_state = $13
WHERE name = $1 AND incarnation = $2 AND version = $3`

const (
	deleteStmt = `DELETE FROM circuits WHERE name = $1`
	clearStmt  = `INSERT INTO circuit_clears (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`
)

// deleteWithWindows is deleteStmt and clearStmt on PostgreSQL: one
// statement that also deletes the circuit's window counts.
const deleteWithWindows = `WITH w AS (DELETE FROM circuit_windows WHERE name = $1),
k AS (INSERT INTO circuit_clears (name) VALUES ($1) ON CONFLICT (name) DO NOTHING)
DELETE FROM circuits WHERE name = $1`

// deleteWithWindowsOnly is deleteWithWindows without circuit_clears.
const deleteWithWindowsOnly = `WITH w AS (DELETE FROM circuit_windows WHERE name = $1) DELETE FROM circuits WHERE name = $1`

// timeArg returns t as the dialect stores it; a zero time is NULL.
func (d Dialect) timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	if d == Postgres {
		return t.UTC()
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// parseTime converts a stored time (time.Time from PostgreSQL, RFC 3339
// text from SQLite, nil for NULL) back.
func parseTime(v any) (time.Time, error) {
	switch v := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return v.UTC(), nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || t.UTC().Format(time.RFC3339Nano) != v {
			return time.Time{}, fmt.Errorf("%q is not an RFC 3339 UTC time", v)
		}
		return t.UTC(), nil
	case []byte:
		return parseTime(string(v))
	}
	return time.Time{}, fmt.Errorf("a time of type %T", v)
}
