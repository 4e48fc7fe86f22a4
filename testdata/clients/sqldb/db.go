// Package sqldb guards a database/sql database, a struct client: its
// interface was written by circuitgen init -source database/sql.DB, then
// cut. QueryRowContext returns a *sql.Row whose Err reports the query's
// error; a rejected one carries the *circuit.OpenError.
package sqldb

import (
	"context"
	"database/sql"
)

//go:generate go tool circuitgen

// DB is the part of *sql.DB this package calls.
//
//circuitgen:guard circuit=sql threshold=3 cooldown=1m errors=*github.com/jackc/pgx/v5/pgconn.ConnectError,context.DeadlineExceeded
type DB interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PingContext(ctx context.Context) error
	Close() error
}

var _ DB = (*sql.DB)(nil)
