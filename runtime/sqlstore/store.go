package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/copies"
	"github.com/circuitgen/circuitgen/runtime/internal/notify"
)

// Store is a driver.Store on the circuits table of a SQL database. It is
// safe for concurrent use; every Breaker on the same database shares every
// circuit in it.
type Store struct {
	db      *sql.DB
	dialect Dialect

	cache *copies.Cache // nil without local copies (cache.go)
	stop  func()        // ends the listening goroutine
	done  chan struct{} // closed when it has ended
	owned bool          // Close closes db (WithOwnedDB)

	noClears atomic.Bool // the database has no circuit_clears (clears.go)

	reports notify.List // Notify's
}

var (
	_ driver.Store  = (*Store)(nil)
	_ driver.Binder = (*Store)(nil)
)

// Option configures New.
type Option func(*config)

type config struct {
	copies bool
	bound  time.Duration
	owned  bool
}

// WithOwnedDB makes the store own the *sql.DB given to New: its Close closes
// it too, for code that opened the database only for the store.
func WithOwnedDB() Option { return func(c *config) { c.owned = true } }

// New returns a store on db, whose dialect is d (see DialectOf). It creates
// nothing: call Migrate once, at deployment or in setup. Without options it
// does no I/O; WithCopies has it check the notify triggers and start
// listening.
func New(ctx context.Context, db *sql.DB, d Dialect, opts ...Option) (*Store, error) {
	if d != Postgres && d != SQLite {
		return nil, fmt.Errorf("sqlstore: unknown dialect %v", d)
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	s := &Store{db: db, dialect: d, owned: cfg.owned}
	if cfg.copies {
		if err := s.startCopies(ctx, cfg.bound); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ErrStandby is wrapped by the error of Check, of New with copies and of
// every Load when the PostgreSQL server is a standby in recovery: it
// serves the rows it replayed, maybe long ago, and refuses writes and
// LISTEN. Point the store at the primary.
var ErrStandby = errors.New("sqlstore: the server is a standby in recovery (pg_is_in_recovery()), not the primary")

// Check returns an error unless the database can serve the store: on
// PostgreSQL, an error wrapping ErrStandby for a server in recovery; on
// both, an error saying to run Migrate when the circuits table does not
// exist. storeurl.Open and New with copies call it.
func (s *Store) Check(ctx context.Context) error {
	var standby, table bool
	if err := s.db.QueryRowContext(ctx, s.dialect.checkQuery()).Scan(&standby, &table); err != nil {
		return fmt.Errorf("sqlstore: check the database: %w", err)
	}
	if standby {
		return ErrStandby
	}
	if !table {
		return errors.New("sqlstore: table circuits does not exist: run Migrate, on a store New made without WithCopies, or circuitctl migrate")
	}
	return nil
}

// migrateLock is the PostgreSQL advisory lock Migrate holds: a constant no
// other application is likely to use.
const migrateLock = "7262917360470261317"

// Migrate creates the circuits table if it does not exist, adds the
// policy_state column to a table created by an earlier release, creates the
// window counts' table (window.go) and, on PostgreSQL, (re)creates the
// trigger that notifies cached stores of every change to circuits. It needs
// a role that may create tables. On PostgreSQL it is one transaction, and
// processes that migrate at once wait for each other.
func (s *Store) Migrate(ctx context.Context) error {
	stmts := []string{s.dialect.schema(), s.dialect.addPolicyState(), windowSchema}
	switch s.dialect {
	case Postgres:
		// One query is one transaction. The lock keeps concurrent ones from
		// failing on each other's catalog rows (TestMigrateConcurrent).
		stmts = append(stmts, windowFunction, clearsSchema, notifySchema)
		stmts = []string{"SELECT pg_advisory_xact_lock(" + migrateLock + ");\n" + strings.Join(stmts, ";\n")}
	case SQLite:
		stmts = append(stmts, clearsSchema, clearsTrigger)
	}
	for _, q := range stmts {
		if _, err := s.db.ExecContext(ctx, q); err != nil && !duplicateColumn(err) {
			return fmt.Errorf("sqlstore: migrate: %w", err)
		}
	}
	return nil
}

// Load returns the circuit's row, or nil when there is none, and the time:
// the database's now() on PostgreSQL, read in the same statement; the local
// clock on SQLite.
func (s *Store) Load(ctx context.Context, name string) (*driver.Record, time.Time, error) {
	rec, now, _, err := s.load(ctx, name)
	return rec, now, err
}

// load is Load, and reports whether the circuit has no row because it was
// cleared (circuit_clears).
func (s *Store) load(ctx context.Context, name string) (*driver.Record, time.Time, bool, error) {
	var (
		cleared, standby                  bool
		dbNow                             any
		id, failures, generation, version sql.NullInt64
		rname, state, incarnation, probe  sql.NullString
		policy                            sql.NullString
		openUntil, leaseUntil, updatedAt  any
	)
	scan := func() error {
		return s.db.QueryRowContext(ctx, s.dialect.loadQuery(s.clears()), name).Scan(&dbNow, &id,
			&rname, &state, &failures, &generation, &incarnation, &version, &openUntil, &probe, &leaseUntil, &updatedAt, &policy, &cleared, &standby)
	}
	err := scan()
	if s.withoutClears(err) {
		err = scan()
	}
	if err == nil && standby {
		err = ErrStandby
	}
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("sqlstore: load %q: %w", name, err)
	}
	now := time.Now()
	if s.dialect == Postgres {
		t, ok := dbNow.(time.Time)
		if !ok {
			return nil, time.Time{}, false, fmt.Errorf("sqlstore: load %q: now() is a %T", name, dbNow)
		}
		now = t
	}
	if !id.Valid {
		return nil, now, cleared, nil
	}
	rec, err := decode(rname, state, incarnation, probe, failures, generation, version, openUntil, leaseUntil, updatedAt, policy)
	if err == nil && rec.Name != name {
		err = fmt.Errorf("it holds circuit %q", rec.Name)
	}
	if err != nil {
		return nil, now, false, fmt.Errorf("sqlstore: circuit %q (row %d): %w: %v", name, id.Int64, driver.ErrCorrupt, err)
	}
	return rec, now, false, nil
}

// decode builds a record from a row's columns and checks it.
func decode(name, state, incarnation, probe sql.NullString, failures, generation, version sql.NullInt64, openUntil, leaseUntil, updatedAt any, policy sql.NullString) (*driver.Record, error) {
	if !name.Valid || !state.Valid || !incarnation.Valid || !failures.Valid || !generation.Valid || !version.Valid {
		return nil, fmt.Errorf("a required column is NULL")
	}
	st, err := driver.ParseState(state.String)
	if err != nil {
		return nil, err
	}
	if failures.Int64 < 0 || failures.Int64 > driver.MaxFailures {
		return nil, fmt.Errorf("failure_count %d out of range", failures.Int64)
	}
	if generation.Int64 <= 0 || version.Int64 <= 0 {
		return nil, fmt.Errorf("generation %d and version %d must be positive", generation.Int64, version.Int64)
	}
	r := &driver.Record{Name: name.String, State: st, Failures: int(failures.Int64),
		Generation: uint64(generation.Int64), Incarnation: incarnation.String, Version: uint64(version.Int64),
		ProbeToken: probe.String}
	for _, c := range []struct {
		column string
		v      any
		dst    *time.Time
	}{{"open_until", openUntil, &r.OpenUntil}, {"lease_until", leaseUntil, &r.LeaseUntil}, {"updated_at", updatedAt, &r.UpdatedAt}} {
		if *c.dst, err = parseTime(c.v); err != nil {
			return nil, fmt.Errorf("%s: %v", c.column, err)
		}
	}
	if err := decodePolicyState(policy, r); err != nil {
		return nil, err
	}
	if err := r.Check(); err != nil {
		return nil, err
	}
	return r, nil
}

// Replace stores next as the circuit's row if the stored row is still prev,
// in one statement; otherwise it returns driver.ErrConflict.
func (s *Store) Replace(ctx context.Context, name string, prev, next *driver.Record) error {
	if next.Generation > math.MaxInt64 || next.Version > math.MaxInt64 {
		return fmt.Errorf("sqlstore: replace %q: generation or version beyond a BIGINT", name)
	}
	d := s.dialect
	var probe any
	if next.ProbeToken != "" {
		probe = next.ProbeToken
	}
	fields := []any{next.State.String(), next.Failures, int64(next.Generation), next.Incarnation, int64(next.Version),
		d.timeArg(next.OpenUntil), probe, d.timeArg(next.LeaseUntil), d.timeArg(next.UpdatedAt), encodePolicyState(next)}
	var res sql.Result
	var err error
	if prev == nil {
		args := append([]any{name}, fields...)
		res, err = s.db.ExecContext(ctx, d.insertStmt(s.clears()), args...)
		if s.withoutClears(err) {
			res, err = s.db.ExecContext(ctx, d.insertStmt(false), args...)
		}
	} else {
		if prev.Version > math.MaxInt64 {
			return driver.ErrConflict
		}
		res, err = s.db.ExecContext(ctx, updateStmt, append([]any{name, prev.Incarnation, int64(prev.Version)}, fields...)...)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: replace %q: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: replace %q: %w", name, err)
	}
	if n == 0 {
		return driver.ErrConflict
	}
	return nil
}

// Delete deletes the circuit's row, even a corrupt one, and notes the
// clear in circuit_clears, so that no process takes the row's absence for
// a loss; on PostgreSQL it deletes the window counts in the same statement.
func (s *Store) Delete(ctx context.Context, name string) error {
	err := s.delete(ctx, name, s.clears())
	if s.withoutClears(err) {
		err = s.delete(ctx, name, false)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: delete %q: %w", name, err)
	}
	return nil
}

// delete is Delete, noting the clear in circuit_clears if clears is set.
func (s *Store) delete(ctx context.Context, name string, clears bool) error {
	if s.dialect == Postgres {
		stmt := deleteWithWindowsOnly
		if clears {
			stmt = deleteWithWindows
		}
		_, err := s.db.ExecContext(ctx, stmt, name)
		return err
	}
	if !clears {
		_, err := s.db.ExecContext(ctx, deleteStmt, name)
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, clearStmt, name)
	if err == nil {
		_, err = tx.ExecContext(ctx, deleteStmt, name)
	}
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
