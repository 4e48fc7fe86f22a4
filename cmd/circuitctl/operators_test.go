package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/circuitgen/circuitgen/runtime/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	_ "modernc.org/sqlite"
)

var (
	binPath  string
	buildErr error
)

// build builds the circuitctl command for the package's tests, before they
// run: they run in parallel, and a test must not spend its own timeout
// waiting for the build.
func build() {
	dir, err := os.MkdirTemp("", "circuitctl-bin")
	if err != nil {
		buildErr = err
		return
	}
	binPath = filepath.Join(dir, "circuitctl")
	out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
	if err != nil {
		buildErr = errors.New(string(out))
	}
}

// binary returns the command built for the package's tests.
func binary(t *testing.T) string {
	t.Helper()
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	build()
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// result is what a run of the binary did.
type result struct {
	code           int
	stdout, stderr string
}

// circuitctl runs the built binary with args, standard input not a terminal
// (empty) and the environment less CIRCUITGEN_STORE, plus env, and checks
// that its output does not show the password.
func circuitctl(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, storeEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("circuitctl %v: %v", args, err)
	}
	if out := stdout.String() + stderr.String(); strings.Contains(out, password) {
		t.Fatalf("circuitctl %v: the password leaked:\n%s", args, out)
	}
	return result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

// password is the password the tests' URLs carry; no output may show it.
const password = "hunter2"

// policy opens a circuit after three failures for ten minutes.
var policy = circuit.Policy{FailureThreshold: 3, Cooldown: 10 * time.Minute, ProbeLease: time.Minute}

// populate records, through a real Breaker on s, circuit billing-api closed
// with two failures, payments open and ledger closed (to be corrupted).
func populate(t *testing.T, s circuit.Store) {
	t.Helper()
	b := circuit.New(s)
	run := func(name string, o circuit.Outcome, n int) {
		for range n {
			err := b.Run(context.Background(), name, policy, func(context.Context) (circuit.Outcome, error) { return o, nil })
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	run("billing-api", circuit.Failure, 2)
	run("payments", circuit.Failure, 3)
	// A healthy circuit has no record: a Clear gives ledger one, closed.
	if err := b.Clear(context.Background(), "ledger"); err != nil {
		t.Fatalf("ledger: %v", err)
	}
}

// backend is a store the operators' commands are tested on.
type backend struct {
	name string
	// setup makes a fresh store with populate's circuits, ledger's record
	// corrupted, and returns its URL, the text by which errors must name
	// ledger's record, and a function that returns that record's raw
	// content, to show it untouched.
	setup func(t *testing.T) (url, record string, raw func() string)
}

var backends = []backend{
	{"file", setupFile},
	{"sqlite", setupSQLite},
	{"redis", setupRedis},
	{"postgres", setupPostgres},
}

func setupFile(t *testing.T) (string, string, func() string) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	populate(t, s)
	path := filepath.Join(dir, circuit.Key("ledger")+".json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	raw := func() string {
		data, err := os.ReadFile(path)
		if err != nil {
			return "(" + err.Error() + ")"
		}
		return string(data)
	}
	return "file://" + dir, path, raw
}

// rowOf returns ledger's row in db as text.
func rowOf(t *testing.T, db *sql.DB) func() string {
	return func() string {
		var state string
		if err := db.QueryRow("SELECT state FROM circuits WHERE name = 'ledger'").Scan(&state); err != nil {
			return "(" + err.Error() + ")"
		}
		return state
	}
}

func setupSQL(t *testing.T, db *sql.DB, d sqlstore.Dialect) func() string {
	t.Helper()
	s, err := sqlstore.New(t.Context(), db, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	populate(t, s)
	if _, err := db.Exec("UPDATE circuits SET state = 'ajar' WHERE name = 'ledger'"); err != nil {
		t.Fatal(err)
	}
	return rowOf(t, db)
}

func setupSQLite(t *testing.T) (string, string, func() string) {
	path := filepath.Join(t.TempDir(), "circuits.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return "sqlite://" + path, `circuit "ledger" (row`, setupSQL(t, db, sqlstore.SQLite)
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func setupRedis(t *testing.T) (string, string, func() string) {
	base := testenv.RedisURL(t)
	opt, err := redis.ParseURL(base)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	prefix := "circuitgen-cli-test:" + randomHex() + ":"
	ctx := context.Background()
	t.Cleanup(func() {
		if keys, _ := c.Keys(ctx, prefix+"*").Result(); len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	s, err := redisstore.New(ctx, c, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	populate(t, s)
	key := s.Key("ledger")
	// A record is one string, fields separated by spaces; the state is the
	// sixth (see runtime/redisstore/record.go).
	v, err := c.Get(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Split(v, " ")
	if len(f) < 6 || f[5] != "closed" {
		t.Fatalf("ledger's record %q: no closed state in the sixth field", v)
	}
	f[5] = "ajar"
	if err := c.Set(ctx, key, strings.Join(f, " "), 0).Err(); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("prefix", prefix)
	u.RawQuery = q.Encode()
	raw := func() string { return c.Get(ctx, key).Val() }
	return u.String(), key, raw
}

func setupPostgres(t *testing.T) (string, string, func() string) {
	u, db := postgresSchema(t)
	return u, `circuit "ledger" (row`, setupSQL(t, db, sqlstore.Postgres)
}

// postgresSchema returns the URL of a schema of its own on the test
// server, with no tables, and a database connected to it.
func postgresSchema(t *testing.T) (string, *sql.DB) {
	dsn := testenv.PostgresDSN(t)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	admin := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { admin.Close() })
	schema := "circuitgen_cli_" + randomHex()
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	// The same server as a postgres:// URL, in the schema of its own.
	q := url.Values{}
	q.Set("host", cfg.Host)
	q.Set("port", fmt.Sprint(cfg.Port))
	q.Set("sslmode", "disable")
	q.Set("search_path", schema)
	q.Set("password", password) // the CI server trusts local connections: ignored, and never shown
	u := url.URL{Scheme: "postgres", User: url.User(cfg.User), Path: "/" + cfg.Database, RawQuery: q.Encode()}
	scfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*scfg)
	t.Cleanup(func() { db.Close() })
	return u.String(), db
}

func TestStateAndClear(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			storeURL, record, raw := be.setup(t)
			corrupt := raw()

			// Every circuit, the corrupt one named in the error.
			r := circuitctl(t, nil, "state", "-store", storeURL)
			if r.code != 1 {
				t.Fatalf("state: exit %d, want 1 for the corrupt record\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{"CIRCUIT", "billing-api  closed  2", "payments     open    3"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("state: stdout lacks %q:\n%s", want, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, record) || !strings.Contains(r.stderr, "corrupt") {
				t.Errorf("state: stderr does not name the corrupt record %s:\n%s", record, r.stderr)
			}

			// JSON, the same.
			r = circuitctl(t, []string{storeEnv + "=" + storeURL}, "state", "-json")
			var rep stateReport
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 1 {
				t.Fatalf("state -json: exit %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
			}
			got := map[string]string{}
			for _, c := range rep.Circuits {
				got[c.Name] = c.State.String()
			}
			if got["billing-api"] != "closed" || got["payments"] != "open" || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], record) {
				t.Errorf("state -json: %+v", rep)
			}
			if rep.Circuits[len(rep.Circuits)-1].OpenUntil.IsZero() {
				t.Errorf("state -json: payments has no open_until: %+v", rep.Circuits)
			}

			// Named circuits: the corrupt one is a row in error.
			r = circuitctl(t, nil, "state", "-store", storeURL, "payments", "billing-api")
			if r.code != 0 || strings.Contains(r.stdout, "ledger") {
				t.Fatalf("state payments billing-api: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = circuitctl(t, nil, "state", "-store", storeURL, "ledger")
			if r.code != 1 || !strings.Contains(r.stdout, "ledger   error") || !strings.Contains(r.stderr, record) {
				t.Fatalf("state ledger: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}

			// Refused without -yes when standard input is not a terminal.
			r = circuitctl(t, nil, "clear", "-store", storeURL, "ledger")
			if r.code != 1 || !strings.Contains(r.stderr, "pass -yes") {
				t.Fatalf("clear without -yes: exit %d\n%s", r.code, r.stderr)
			}
			if raw() != corrupt {
				t.Fatal("a refused clear changed the record")
			}
			if r = circuitctl(t, nil, "clear", "-store", storeURL, "-yes", "no-such-circuit"); r.code != 1 || !strings.Contains(r.stderr, "no record") {
				t.Fatalf("clear of an unknown circuit: exit %d\n%s", r.code, r.stderr)
			}

			// Cleared with -yes: the corrupt record, then an open circuit.
			for _, name := range []string{"ledger", "payments"} {
				if r = circuitctl(t, nil, "clear", "-store", storeURL, "-yes", name); r.code != 0 || !strings.Contains(r.stdout, "cleared circuit "+name) {
					t.Fatalf("clear -yes %s: exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
				}
			}
			if raw() == corrupt {
				t.Fatal("clear -yes left the corrupt record")
			}
			// A Clear leaves each a closed record of a fresh incarnation.
			r = circuitctl(t, nil, "state", "-store", storeURL)
			cleared := regexp.MustCompile(`(?m)^(payments|ledger) +closed +0 +1 +- `)
			if r.code != 0 || len(cleared.FindAllString(r.stdout, -1)) != 2 || !strings.Contains(r.stdout, "billing-api") {
				t.Fatalf("state after clear: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestStateLeavesFilesAlone checks that reading a state directory, corrupt
// record and all, and a refused clear create, change and remove nothing.
func TestStateLeavesFilesAlone(t *testing.T) {
	t.Parallel()
	storeURL, _, _ := setupFile(t)
	dir := strings.TrimPrefix(storeURL, "file://")
	before := listing(t, dir)
	circuitctl(t, nil, "state", "-store", storeURL)
	circuitctl(t, nil, "state", "-store", storeURL, "-json", "ledger", "payments", "never-called")
	circuitctl(t, nil, "clear", "-store", storeURL, "payments")
	if after := listing(t, dir); after != before {
		t.Fatalf("the state directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// listing describes every file of dir: name, size, modification time and
// content.
func listing(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %d %s %x\n", e.Name(), fi.Size(), fi.ModTime().Format(time.RFC3339Nano), data)
	}
	return b.String()
}

func TestOperatorErrors(t *testing.T) {
	t.Parallel()
	storeURL, _, _ := setupFile(t)
	missing := "file://" + filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name     string
		env      []string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no store", nil, []string{"state"}, 2, "no store: pass -store URL or set CIRCUITGEN_STORE"},
		{"no store to clear", nil, []string{"clear", "-yes", "payments"}, 2, "no store"},
		{"a store given as a name", nil, []string{"state", "/var/lib/circuits"}, 2, "to name the store, pass -store URL"},
		{"missing directory", nil, []string{"state", "-store", missing}, 1, "state directory " + strings.TrimPrefix(missing, "file://") + " does not exist"},
		{"missing directory from the environment", []string{storeEnv + "=" + missing}, []string{"clear", "-yes", "payments"}, 1, "does not exist"},
		{"unknown scheme", nil, []string{"state", "-store", "ftp://example.com/x"}, 1, `unsupported scheme "ftp"`},
		{"no scheme", nil, []string{"state", "-store", "/var/lib/circuits"}, 1, "has no scheme"},
		{"relative file URL", nil, []string{"state", "-store", "file://var/lib/circuits"}, 1, "file:///absolute/path"},
		{"unparsable URL", nil, []string{"state", "-store", "redis://[::1"}, 1, "store URL: missing ']'"},
		{"password hidden", nil, []string{"state", "-store", "redis://u:hunter2@127.0.0.1:1/0?prefix=x"}, 1, "u:xxxxx@127.0.0.1:1"},
		{"rediss password hidden", nil, []string{"clear", "-yes", "-store", "rediss://:hunter2@127.0.0.1:1/0", "payments"}, 1, ":xxxxx@127.0.0.1:1"},
		{"unix password hidden", nil, []string{"state", "-store", "unix://u:hunter2@/nonexistent/redis.sock"}, 1, "u:xxxxx@"},
		{"redis query password hidden", nil, []string{"state", "-store", "redis://127.0.0.1:1/0?password=hunter2"}, 1, "password=xxxxx"},
		{"postgres password hidden", []string{storeEnv + "=postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=1"}, []string{"state"}, 1, "u:xxxxx@127.0.0.1:1"},
		{"postgres query password hidden", nil, []string{"state", "-store", "postgres://u@127.0.0.1:1/db?password=hunter2&connect_timeout=x"}, 1, "password=xxxxx"},
		{"postgresql sslpassword hidden", nil, []string{"clear", "-yes", "-store", "postgresql://u@127.0.0.1:1/db?sslpassword=hunter2&connect_timeout=1", "payments"}, 1, "sslpassword=xxxxx"},
		{"missing sqlite file", nil, []string{"state", "-store", "sqlite:///nonexistent/c.db"}, 1, "database file /nonexistent/c.db does not exist"},
		{"invalid circuit name", nil, []string{"state", "-store", storeURL, "https://billing"}, 2, "invalid name"},
		{"clear needs one name", nil, []string{"clear", "-store", storeURL, "a", "b"}, 2, "usage: circuitctl clear"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := circuitctl(t, tt.env, tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tt.wantCode, tt.wantErr)
			}
		})
	}
	if _, err := os.Stat(strings.TrimPrefix(missing, "file://")); !os.IsNotExist(err) {
		t.Fatal("a command created the missing state directory")
	}
	if _, err := os.Stat("/nonexistent/c.db"); !os.IsNotExist(err) {
		t.Fatal("a command created the missing database")
	}
}

// onTerminal returns a command that runs circuitctl with args (words of a
// shell command line) on a pseudo-terminal: util-linux's script, in every
// Debian.
func onTerminal(t *testing.T, ctx context.Context, args string) *exec.Cmd {
	t.Helper()
	script, err := exec.LookPath("script")
	if err != nil {
		testenv.Missing(t, "script (util-linux) is not installed: no pseudo-terminal to test on")
	}
	return exec.CommandContext(ctx, script, "-qec", binary(t)+" "+args, "/dev/null")
}

// answer runs circuitctl with args on a pseudo-terminal, answers its
// question with the line a, and returns its exit status and output.
func answer(t *testing.T, args, a string) (int, string) {
	t.Helper()
	cmd := onTerminal(t, t.Context(), args)
	cmd.Stdin = strings.NewReader(a)
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestClearAsksOnTerminal runs clear on a pseudo-terminal (util-linux's
// script, in every Debian) and answers its question.
func TestClearAsksOnTerminal(t *testing.T) {
	t.Parallel()
	storeURL, _, _ := setupFile(t)
	for _, tt := range []struct {
		answer   string
		wantCode int
		wantOut  string
	}{
		{"\n", 1, "not cleared"},
		{"n\n", 1, "not cleared"},
		{"y\n", 0, "cleared circuit payments"},
	} {
		code, out := answer(t, "clear -store '"+storeURL+"' payments", tt.answer)
		if code != tt.wantCode || !strings.Contains(out, "clear circuit payments in "+storeURL+"? [y/N]") || !strings.Contains(out, tt.wantOut) {
			t.Fatalf("answer %q: exit %d, output:\n%s", tt.answer, code, out)
		}
	}
}

// TestSlowAnswerStillClears: -timeout bounds the store's work, not the
// operator's answer: a "y" given after the timeout has passed still clears.
func TestSlowAnswerStillClears(t *testing.T) {
	t.Parallel()
	storeURL, _, _ := setupFile(t)
	cmd := onTerminal(t, t.Context(), "clear -timeout 300ms -store '"+storeURL+"' payments")
	pr, pw := io.Pipe()
	cmd.Stdin = pr
	go func() {
		time.Sleep(900 * time.Millisecond)
		_, _ = io.WriteString(pw, "y\n")
		_ = pw.Close()
	}()
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(string(out), "cleared circuit payments") {
		t.Fatalf("answered after the timeout: exit %d, output:\n%s", code, out)
	}
}
