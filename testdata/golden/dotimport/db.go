package dotimport

import (
	"context"
	. "database/sql/driver"
)

// DB names errors its file dot-imports, as Go code there would.
//
//circuitgen:guard circuit=db errors=ErrBadConn,ErrSkip
type DB interface {
	Exec(ctx context.Context, query string, args []NamedValue) (Result, error)
}
