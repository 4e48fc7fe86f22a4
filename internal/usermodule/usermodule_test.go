package usermodule

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxGained is how many modules a user module that imports runtime/circuit
// and runtime/filestore may gain, circuitgen's root module included.
const maxGained = 8

// heavy are modules that only circuitgen's other modules (stores, exporters,
// examples) may bring.
var heavy = []string{
	"google.golang.org/grpc",
	"go.opentelemetry.io/otel",
	"github.com/prometheus/client_golang",
	"github.com/jackc/pgx/v5",
	"github.com/redis/go-redis/v9",
}

// userModule writes a module that requires circuitgen's root module from
// this checkout and imports what main.go says, runs go mod tidy in it, and
// returns its module graph (go list -m all, the user module left out).
func userModule(t *testing.T, requires, main string) map[string]string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the module proxy")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/user\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/circuitgen/circuitgen v0.0.0-00010101000000-000000000000\n" +
		requires + ")\n\nreplace github.com/circuitgen/circuitgen => " + repo + "\n"
	for name, data := range map[string]string{"go.mod": gomod, "main.go": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("mod", "tidy")
	graph := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(run("list", "-m", "all")), "\n")[1:] {
		path, version, _ := strings.Cut(line, " ")
		graph[path] = version
	}
	return graph
}

// TestRuntimeStaysLight: a module that uses the runtime and the file store
// gains at most maxGained modules, none of them a store driver's or an
// exporter's.
func TestRuntimeStaysLight(t *testing.T) {
	graph := userModule(t, "", `package main

import (
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

func main() {
	s, _ := filestore.Open("/tmp/circuits")
	_ = circuit.New(s)
}
`)
	var mods []string
	for m := range graph {
		mods = append(mods, m)
	}
	slices.Sort(mods)
	t.Logf("a module importing runtime/circuit and runtime/filestore gains %d modules: %v", len(mods), mods)
	if len(mods) > maxGained {
		t.Errorf("it gains %d modules, want at most %d", len(mods), maxGained)
	}
	for _, h := range heavy {
		if _, ok := graph[h]; ok {
			t.Errorf("it gains %s", h)
		}
	}
}

// TestUsersPinsKept: a module that pins an older grpc keeps it when it
// adds circuitgen's runtime.
func TestUsersPinsKept(t *testing.T) {
	const pinned = "v1.60.0"
	graph := userModule(t, "\tgoogle.golang.org/grpc "+pinned+"\n", `package main

import (
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
	"google.golang.org/grpc"
)

func main() {
	s, _ := filestore.Open("/tmp/circuits")
	_ = circuit.New(s)
	_ = grpc.WithBlock
}
`)
	if got := graph["google.golang.org/grpc"]; got != pinned {
		t.Errorf("grpc is %s after adding circuitgen, want the user's %s", got, pinned)
	}
}
