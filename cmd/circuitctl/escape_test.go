package main

import (
	"bytes"
	"database/sql"
	"strings"
	"testing"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// planted is a row name any application sharing the database could insert:
// it retitles the window, clears the screen, and forges a table line.
const planted = "\x1b]0;pwned\x07\x1b[2J\x1b[H\nbilling-api  closed  0  1\u009b31m\u202e"

// TestPrintableTable checks printable on each kind of unsafe byte.
func TestPrintableTable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"billing-api":      "billing-api",
		"a\x1b[2Jb":        `a\x1b[2Jb`,
		"a\nb\tc\rd":       `a\nb\tc\rd`,
		"a\u009bb":         `a\u009bb`,
		"a\u202eb":         `a\u202eb`,
		"a\x7fb":           `a\x7fb`,
		"a\xffb":           `a\xffb`,
		`it holds "x" ünï`: `it holds "x" ünï`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// clean reports the first byte of out a terminal could act on, other than
// the newlines between lines.
func clean(t *testing.T, what string, out []byte) {
	t.Helper()
	for _, r := range string(out) {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			t.Errorf("%s shows %U raw:\n%q", what, r, out)
			return
		}
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "billing-api  closed  0  1") {
			t.Errorf("%s shows a forged line %q", what, line)
		}
	}
}

// TestPlantedRowEscaped plants a row with escape sequences in its name in a
// PostgreSQL store's circuits table: state, state -json and state -watch
// show it with every control byte escaped, and no forged line.
func TestPlantedRowEscaped(t *testing.T) {
	t.Parallel()
	url, _, _ := setupPostgres(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	plant(t, db)
	for _, args := range [][]string{{"state"}, {"state", "-json"}} {
		var stdout, stderr bytes.Buffer
		code := run(append(args, "-store", url), &stdout, &stderr)
		t.Logf("%v: exit %d\n%s%s", args, code, stdout.String(), stderr.String())
		if code != 1 {
			t.Errorf("%v: exit %d, want 1 (a record cannot be read)", args, code)
		}
		clean(t, strings.Join(args, " ")+" stdout", stdout.Bytes())
		clean(t, strings.Join(args, " ")+" stderr", stderr.Bytes())
	}
	for _, args := range [][]string{{"-store", url}, {"-json", "-store", url}} {
		w := startWatch(t, args...)
		lines := w.until("the planted row", func(l string) bool { return strings.Contains(l, "pwned") })
		clean(t, "state -watch "+strings.Join(args[:len(args)-2], " "), []byte(strings.Join(lines, "\n")))
		w.interrupt()
	}
}

// plant inserts a row named planted.
func plant(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO circuits (name, state, failure_count, generation, incarnation, version, updated_at)
		VALUES ($1, 'closed', 0, 1, 'x', 1, now())`, planted); err != nil {
		t.Fatal(err)
	}
}
