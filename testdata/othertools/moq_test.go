package othertools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repository is a package guarded by circuitgen and mocked by moq, each
// from its own go:generate line ({{generate}}, so that go generate does
// not take them for this package's); {{first}} and {{second}} are the two
// commands, in the order under test, and {{extra}} a method to add.
const repository = `package repo

import "context"

{{generate}} {{first}}
{{generate}} {{second}}

// Repository is a store of users.
//
//circuitgen:guard circuit=repo errors=context.DeadlineExceeded
type Repository interface {
	Get(ctx context.Context, id string) (string, error)
	Put(ctx context.Context, id, name string) error
	{{extra}}
}
`

const (
	circuitgenLine = "go tool circuitgen"
	moqLine        = "go tool moq -out mock_test.go . Repository"
)

// TestMoqBeforeAndAfter runs go generate on a package that circuitgen
// guards and moq mocks, with either tool's line first, then adds a method
// to the interface and runs go generate again: it must work in both orders,
// the stale guarded client notwithstanding, and the package's tests (the
// assertion that the wrapper implements the interface among them) must
// build and vet.
func TestMoqBeforeAndAfter(t *testing.T) {
	for _, order := range [][2]string{{circuitgenLine, moqLine}, {moqLine, circuitgenLine}} {
		name := "circuitgen first"
		if order[0] == moqLine {
			name = "moq first"
		}
		t.Run(name, func(t *testing.T) {
			dir := packageDir(t)
			write := func(extra string) {
				src := strings.NewReplacer("{{generate}}", "//go:"+"generate", "{{first}}", order[0], "{{second}}", order[1], "{{extra}}", extra).Replace(repository)
				if err := os.WriteFile(filepath.Join(dir, "repo.go"), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("")
			goCmd(t, dir, "generate", ".")
			write("Delete(ctx context.Context, id string) error")
			goCmd(t, dir, "generate", ".")
			for _, f := range []string{"guarded_gen.go", "mock_test.go"} {
				src, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil || !strings.Contains(string(src), "Delete(") {
					t.Fatalf("%s after the change: %v; want it to have Delete", f, err)
				}
			}
			goCmd(t, dir, "vet", ".")
		})
	}
}

// packageDir makes a directory for a package of this module, removed after
// the test.
func packageDir(t *testing.T) string {
	t.Helper()
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "repo")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	t.Cleanup(func() {
		os.RemoveAll(abs)
		os.Remove(filepath.Dir(abs)) // only when empty
	})
	return abs
}

// goCmd runs the go command in dir and fails the test when it fails.
func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
