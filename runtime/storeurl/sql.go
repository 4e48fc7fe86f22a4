package storeurl

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"

	"github.com/circuitgen/circuitgen/runtime/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// openPostgres opens postgres:// or postgresql:// in pgx's URL syntax, with
// local copies unless cache=off.
func openPostgres(ctx context.Context, u *url.URL) (Store, error) {
	db, cached, err := postgresDB(u)
	if err != nil {
		return nil, err
	}
	if !cached {
		return openSQL(ctx, db, sqlstore.Postgres)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	ss, err := sqlstore.New(ctx, db, sqlstore.Postgres, sqlstore.WithCopies(0), sqlstore.WithOwnedDB())
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return ss, nil
}

// postgresDB returns the database a postgres:// URL names, not yet
// connected, and whether the URL asks for local copies.
func postgresDB(u *url.URL) (*sql.DB, bool, error) {
	q := u.Query()
	cached, err := cacheParam(q)
	if err != nil {
		return nil, false, err
	}
	v := *u
	v.RawQuery = q.Encode()
	cfg, err := pgx.ParseConfig(v.String())
	if err != nil {
		return nil, false, fmt.Errorf("postgres URL: %w", err)
	}
	return stdlib.OpenDB(*cfg), cached, nil
}

// openSQLite opens sqlite:///abs/path.db: a database file that must exist.
// It is opened read-write but never created.
func openSQLite(ctx context.Context, u *url.URL) (Store, error) {
	db, err := sqliteDB(u)
	if err != nil {
		return nil, err
	}
	return openSQL(ctx, db, sqlstore.SQLite)
}

// sqliteDB returns the database file a sqlite:/// URL names, not yet
// opened.
func sqliteDB(u *url.URL) (*sql.DB, error) {
	if u.Opaque != "" || u.Host != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("a sqlite URL is sqlite:///absolute/path/to.db (three slashes, no host or query)")
	}
	path, err := localPath(u, "database file", false)
	if err != nil {
		return nil, err
	}
	// A URI filename: mode=rw fails rather than creates a missing file.
	dsn := (&url.URL{Scheme: "file", Path: path, RawQuery: "mode=rw&_pragma=busy_timeout(10000)"}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return db, nil
}

// openSQL checks that db answers and can serve a store (Check), and
// wraps it in a store.
func openSQL(ctx context.Context, db *sql.DB, d sqlstore.Dialect) (Store, error) {
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%v: %w", d, err)
	}
	ss, err := sqlstore.New(ctx, db, d, sqlstore.WithOwnedDB())
	if err == nil {
		err = ss.Check(ctx)
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return ss, nil
}

// migrateSQL creates or updates the tables of a postgres:// or sqlite:///
// store (sqlstore.Store.Migrate); ok is false for another scheme.
func migrateSQL(ctx context.Context, u *url.URL) (ok bool, err error) {
	var db *sql.DB
	d := sqlstore.Postgres
	switch u.Scheme {
	case "postgres", "postgresql":
		db, _, err = postgresDB(u)
	case "sqlite":
		db, err = sqliteDB(u)
		d = sqlstore.SQLite
	default:
		return false, nil
	}
	if err != nil {
		return true, err
	}
	defer db.Close()
	ss, err := sqlstore.New(ctx, db, d)
	if err != nil {
		return true, err
	}
	if err := ss.Check(ctx); errors.Is(err, sqlstore.ErrStandby) {
		return true, err
	}
	return true, ss.Migrate(ctx)
}
