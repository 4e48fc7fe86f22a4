package row

import (
	"context"
	"errors"
)

// ErrConn is a lost connection.
var ErrConn = errors.New("db: connection lost")

// Row is one row of a query; Scan reports the query's error, as pgx.Row
// does.
type Row interface {
	Scan(dest ...any) error
}

// Record is a row with more than Scan.
type Record interface {
	Scan(dest ...any) error
	Columns() []string
}

// DB is a database client whose queries of one row report their error
// late.
//
//circuitgen:guard circuit=db errors=ErrConn
type DB interface {
	QueryRow(ctx context.Context, sql string, args ...any) Row
	Lookup(ctx context.Context, key string) Record
	Exec(ctx context.Context, sql string) error
}
