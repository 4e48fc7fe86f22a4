package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// chdir changes into dir for the test.
func chdir(t *testing.T, dir string) {
	t.Helper()
	t.Chdir(dir)
}

// testdata makes the package's testdata directory, removed after the test
// when it is empty, and returns its relative path.
func testdata(t *testing.T) string {
	t.Helper()
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata")
	t.Cleanup(func() { os.Remove(abs) }) // only when empty
	return "testdata"
}

// writePackage writes an annotated package into a directory of the module
// (testdata is ignored by ./... but loads by its path) and returns it.
func writePackage(t *testing.T, src string) string {
	t.Helper()
	dir, err := os.MkdirTemp(testdata(t), "case")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	t.Cleanup(func() { os.RemoveAll(abs) })
	if err := os.WriteFile(filepath.Join(dir, "api.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return abs
}

const apiSrc = `package clitest

import "context"

//circuitgen:guard circuit=api statuses=503
type API interface {
	Get(ctx context.Context) error
}
`

func TestGenCheckAndErrors(t *testing.T) {
	dir := writePackage(t, apiSrc)
	chdir(t, dir)
	var stdout, stderr bytes.Buffer

	if code := run([]string{"-check"}, &stdout, &stderr); code != 1 || !strings.Contains(stdout.String(), "+++ guarded_gen.go (generated)") {
		t.Fatalf("-check before generating: exit %d, stdout %q, stderr %q; want 1 and a diff", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat("guarded_gen.go"); !os.IsNotExist(err) {
		t.Fatal("-check wrote the output")
	}
	stdout.Reset()
	if code := run(nil, &stdout, &stderr); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr.String())
	}
	if code := run([]string{"gen", "-check"}, &stdout, &stderr); code != 0 || stdout.Len() != 0 {
		t.Fatalf("-check after generating: exit %d, diff %q", code, stdout.String())
	}

	// A broken input reports every error and writes nothing.
	bad := strings.Replace(apiSrc, "statuses=503", "statuses=999 cooldown=x", 1)
	if err := os.WriteFile("api.go", []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile("guarded_gen.go")
	stderr.Reset()
	if code := run(nil, &stdout, &stderr); code != 1 {
		t.Fatalf("broken input: exit %d, want 1", code)
	}
	want := "api.go:5:41: statuses entry \"999\" is outside 100-599\napi.go:5:54: cooldown \"x\" is not a duration such as 30s or 1m30s\n"
	if stderr.String() != want {
		t.Fatalf("stderr = %q, want %q", stderr.String(), want)
	}
	if after, _ := os.ReadFile("guarded_gen.go"); !bytes.Equal(before, after) {
		t.Fatal("a failed run changed the output")
	}
}

func TestInit(t *testing.T) {
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := run([]string{"init", "-source", "net/http.RoundTripper"}, &stdout, &stderr); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile("circuitgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"source: net/http.RoundTripper", "RoundTrip: {}", "circuit: round-tripper"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("scaffold lacks %q:\n%s", want, data)
		}
	}
	if code := run([]string{"init", "-source", "net/http.RoundTripper"}, &stdout, &stderr); code != 1 {
		t.Fatalf("init over an existing manifest: exit %d, want 1", code)
	}
	stderr.Reset()
	if code := run([]string{"init", "-source", "http.RoundTripper", "-o", "-"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "package http not found: did you mean net/http?") {
		t.Fatalf("init -source http.RoundTripper: exit %d, stderr %q; want 1 and the import path it could mean", code, stderr.String())
	}
}

func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-nosuchflag"}, &stdout, &stderr); code != 2 {
		t.Fatalf("bad flag: exit %d, want 2", code)
	}
	if code := run([]string{"help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "init") {
		t.Fatalf("help: exit %d, %q", code, stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"version"}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "circuitgen (devel) (generator (devel), go1.") {
		t.Fatalf("version: exit %d, %q; want the versions of a build in this repository", code, stdout.String())
	}
}

// TestOutMustBeAGoFile checks that -out is held to the manifest's output
// rules: a .go file that is not a test file.
func TestOutMustBeAGoFile(t *testing.T) {
	chdir(t, writePackage(t, apiSrc))
	tests := []struct {
		out, want string
	}{
		{"guarded_test.go", `-out "guarded_test.go" must not be a _test.go file`},
		{"notgo.txt", `-out "notgo.txt" must name a .go file`},
		{"guarded.go.txt", `-out "guarded.go.txt" must name a .go file`},
		{"_guarded.go", `-out "_guarded.go" must not start with _ or ., which the go tool ignores`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"-out", tt.out}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("-out %s: exit %d, stderr %q; want 1 and %q", tt.out, code, stderr.String(), tt.want)
		}
		if _, err := os.Stat(tt.out); !os.IsNotExist(err) {
			t.Errorf("-out %s wrote the file", tt.out)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-out", "guarded.go"}, &stdout, &stderr); code != 0 {
		t.Fatalf("-out guarded.go: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat("guarded.go"); err != nil {
		t.Fatalf("-out guarded.go: %v", err)
	}
}

// TestInitStruct checks that init on a struct client writes a Go file that
// circuitgen generates from as it is, and that the result builds and
// vets: database/sql.DB (its QueryRow methods return *sql.Row, guarded)
// and net/http.Client.
func TestInitStruct(t *testing.T) {
	for _, tt := range []struct{ source, file, wantType string }{
		{"database/sql.DB", "db.go", "GuardedDB"},
		{"net/http.Client", "client.go", "GuardedClient"},
	} {
		t.Run(tt.source, func(t *testing.T) {
			dir, err := os.MkdirTemp(testdata(t), "init")
			if err != nil {
				t.Fatal(err)
			}
			abs, _ := filepath.Abs(dir)
			t.Cleanup(func() { os.RemoveAll(abs) })
			t.Chdir(abs)
			var stdout, stderr bytes.Buffer
			if code := run([]string{"init", "-source", tt.source}, &stdout, &stderr); code != 0 {
				t.Fatalf("init: exit %d: %s", code, stderr.String())
			}
			if _, err := os.Stat(tt.file); err != nil {
				t.Fatalf("init did not write %s: %v", tt.file, err)
			}
			if code := run(nil, &stdout, &stderr); code != 0 {
				t.Fatalf("gen on the scaffold: exit %d: %s", code, stderr.String())
			}
			out, err := os.ReadFile("guarded_gen.go")
			if err != nil || !bytes.Contains(out, []byte("type "+tt.wantType+" struct")) {
				t.Fatalf("guarded_gen.go: %v, want type %s", err, tt.wantType)
			}
			vet := exec.Command("go", "vet", ".")
			if msg, err := vet.CombinedOutput(); err != nil {
				t.Fatalf("go vet of the scaffold and its guarded client: %v\n%s", err, msg)
			}
		})
	}
}
