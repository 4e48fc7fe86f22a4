package generator

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRejectedRowMethods checks that a rejected call's row answers every
// method of its interface, not only Scan: a pgx.Rows-like row is ranged
// with Next, read with Err and released with Close, and the row of a call
// that was never sent has no row of next's behind it. It checks too that
// an admitted cursor settles its call as an iterator does: at its end (Next
// false) with the outcome of Err, a query error with no Scan and one after
// rows that scanned among them, and at Close first with the outcome of
// the Err that next reports once closed.
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
//circuitgen:guard circuit=db threshold=1 errors=ErrConn
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

type db struct {
	called bool
	rows   Rows
}

func (d *db) Query(context.Context, string) Rows { d.called = true; return d.rows }

// cursor is a Rows with no row whose Err is err.
type cursor struct{ err error }

func (c *cursor) Close()                 {}
func (c *cursor) Err() error             { return c.err }
func (c *cursor) Next() bool             { return false }
func (c *cursor) Scan(...any) error      { return errors.New("no row") }
func (c *cursor) Values() ([]any, error) { return nil, c.err }
func (c *cursor) Columns() []string      { return []string{"n"} }

func TestErrSettles(t *testing.T) {
	kit := circuittest.New()
	rows := NewGuardedDB(&db{rows: &cursor{err: ErrConn}}, kit.Breaker).Query(context.Background(), "SELECT 1")
	for rows.Next() {
	}
	if err := rows.Err(); !errors.Is(err, ErrConn) {
		t.Fatalf("Err() = %v, want ErrConn", err)
	}
	rows.Close()
	kit.RequireState(t, "db", circuit.StateOpen)
}

func TestCleanEndCloses(t *testing.T) {
	kit := circuittest.New()
	kit.HalfOpen("db")
	next := &db{rows: &cursor{}}
	g := NewGuardedDB(next, kit.Breaker)
	rows := g.Query(context.Background(), "SELECT 1 WHERE false")
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	kit.RequireState(t, "db", circuit.StateClosed)
}

// more is a Rows with rows left.
type more struct{ cursor }

func (m *more) Next() bool { return true }

// failing has one row, then fails.
type failing struct {
	cursor
	n int
}

func (f *failing) Next() bool        { f.n++; return f.n == 1 }
func (f *failing) Scan(...any) error { return nil }

func TestEndFailsAfterRows(t *testing.T) {
	kit := circuittest.New()
	rows := NewGuardedDB(&db{rows: &failing{cursor: cursor{err: ErrConn}}}, kit.Breaker).Query(context.Background(), "SELECT 1")
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	rows.Close()
	kit.RequireState(t, "db", circuit.StateOpen)
}

// closing reports its error only once closed, as pgx.Rows does: its
// Close reads what is left of the query.
type closing struct {
	more
	closed bool
}

func (c *closing) Close()     { c.closed = true }
func (c *closing) Err() error {
	if c.closed {
		return c.err
	}
	return nil
}

// TestCloseFirstSettles closes a cursor before Next returned false, as
// pgx.CollectOneRow does: the Err that next reports after its Close
// settles the call, nil a success that closes a half-open circuit.
func TestCloseFirstSettles(t *testing.T) {
	kit := circuittest.New()
	kit.HalfOpen("db")
	rows := NewGuardedDB(&db{rows: &closing{}}, kit.Breaker).Query(context.Background(), "SELECT 1")
	if !rows.Next() {
		t.Fatal("Next = false, want a row")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	kit.RequireState(t, "db", circuit.StateClosed)

	rows = NewGuardedDB(&db{rows: &closing{more: more{cursor{err: ErrConn}}}}, kit.Breaker).Query(context.Background(), "SELECT 1/0")
	rows.Close()
	kit.RequireState(t, "db", circuit.StateOpen)
}

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
