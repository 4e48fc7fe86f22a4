package cursor

import (
	"context"
	"errors"
)

// ErrConn is a lost connection.
var ErrConn = errors.New("db: connection lost")

// Rows ranges over the rows of a query, as pgx.Rows does: the query's
// error comes at Err, after Next returned false.
type Rows interface {
	Close()
	Err() error
	Next() bool
	Scan(dest ...any) error
	Values() ([]any, error)
}

// DB returns cursors that report their error late.
//
//circuitgen:guard circuit=db errors=ErrConn
type DB interface {
	Query(ctx context.Context, sql string, args ...any) Rows
}
