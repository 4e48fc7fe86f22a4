package cursorpair

import (
	"context"
	"errors"
)

// ErrConn is a lost connection.
var ErrConn = errors.New("db: connection lost")

// Rows ranges over the rows of a query, as pgx.Rows does: the query's
// error comes at Err, after Next returned false. Its Close returns an
// error, as database/sql's Rows.Close does.
type Rows interface {
	Close() error
	Err() error
	Next() bool
	Scan(dest ...any) error
}

// Row is one row, as pgx.Row is: its error comes at Scan.
type Row interface {
	Scan(dest ...any) error
}

// DB returns its cursors with an error, as pgx's Query does: an error at
// open settles the call, else the cursor's end does.
//
//circuitgen:guard circuit=db errors=ErrConn
type DB interface {
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	// One returns a row with an error: the row's Scan settles the call.
	One(ctx context.Context, sql string) (Row, error)
}
