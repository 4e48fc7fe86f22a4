package generator

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/circuitgen/circuitgen/generator/internal/spec"
	"github.com/circuitgen/circuitgen/generator/internal/templates"
)

// TestREADMEOptions checks that the README's option table is the one the
// option schema renders; -update rewrites it.
func TestREADMEOptions(t *testing.T) {
	const (
		path  = "../README.md"
		begin = "<!-- options: written from the generator's option schema by go test ./generator -run TestREADMEOptions -update -->\n"
		end   = "<!-- end options -->"
	)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(begin))
	j := bytes.Index(data, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no option table between %q and %q", path, begin, end)
	}
	var table strings.Builder
	if err := templates.Options.Execute(&table, spec.Docs()); err != nil {
		t.Fatal(err)
	}
	table.WriteString("\n")
	got := string(data[i+len(begin) : j])
	if got == table.String() {
		return
	}
	if *update {
		out := append(append(append([]byte{}, data[:i+len(begin)]...), table.String()...), data[j:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the README's option table is stale (go test ./generator -run TestREADMEOptions -update):\n%s", diff("README.md", "schema", []byte(got), []byte(table.String())))
}
