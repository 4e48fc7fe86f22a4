package generator

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRejectedRowMethods checks that a rejected call's row answers every
// method of its interface, not only Scan: a pgx.Rows-like row is ranged
// with Next, read with Err and released with Close, and the row of a call
// that was never sent has no row of next's behind it.
func TestRejectedRowMethods(t *testing.T) {
	root := moduleTempDir(t, "rows")
	putFile(t, filepath.Join(root, "db.go"), `package rows

import (
	"context"
	"errors"
)

// ErrConn is a lost connection.
var ErrConn = errors.New("conn")

// Rows is a cursor, as pgx.Rows is.
type Rows interface {
	Close()
	Err() error
	Next() bool
	Scan(dest ...any) error
	Values() ([]any, error)
	Columns() []string
}

// DB returns its rows' error late.
//
//circuitgen:guard circuit=db errors=ErrConn
type DB interface {
	Query(ctx context.Context, sql string) Rows
}
`)
	putFile(t, filepath.Join(root, "rows_test.go"), `package rows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

type db struct{ called bool }

func (d *db) Query(context.Context, string) Rows { d.called = true; return nil }

func TestRejected(t *testing.T) {
	kit := circuittest.New()
	kit.Open("db", time.Hour)
	next := &db{}
	rows := NewGuardedDB(next, kit.Breaker).Query(context.Background(), "SELECT 1")
	defer rows.Close()
	for rows.Next() {
		t.Fatal("a rejected row has a row")
	}
	var open *circuit.OpenError
	if err := rows.Err(); !errors.As(err, &open) {
		t.Errorf("Err() = %v, want the *circuit.OpenError", err)
	}
	if v, err := rows.Values(); v != nil || !errors.As(err, &open) {
		t.Errorf("Values() = %v, %v, want nil and the *circuit.OpenError", v, err)
	}
	if c := rows.Columns(); c != nil {
		t.Errorf("Columns() = %v, want nil", c)
	}
	if err := rows.Scan(); !errors.As(err, &open) {
		t.Errorf("Scan() = %v, want the *circuit.OpenError", err)
	}
	if next.called {
		t.Error("a rejected call reached next")
	}
}
`)
	outs, err := Generate(Config{Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(outs); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-count=1", ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test of the generated rows: %v\n%s", err, out)
	}
}
