package generator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestManifestWithPatterns checks that a package the patterns name has its
// own //circuitgen:guard interfaces generated when the manifest also lists
// one of its interfaces, however the patterns name it; and that a package
// only the manifest lists does not.
func TestManifestWithPatterns(t *testing.T) {
	root := moduleTempDir(t, "patterns")
	base := "github.com/circuitgen/circuitgen/generator/testdata/" + filepath.Base(root)
	putFile(t, filepath.Join(root, "src", "src.go"), `package src

import (
	"context"
	"errors"
)

// ErrDown is a failure.
var ErrDown = errors.New("down")

// Own is guarded by its own directive.
//
//circuitgen:guard circuit=own errors=ErrDown
type Own interface {
	Get(ctx context.Context) error
}

// Listed is listed in dst's manifest.
type Listed interface {
	Put(ctx context.Context) error
}
`)
	putFile(t, filepath.Join(root, "dst", "dst.go"), "package dst\n")
	putFile(t, filepath.Join(root, "dst", "circuitgen.yaml"), `version: 1
interfaces:
  - source: `+base+`/src.Listed
    circuit: listed
    errors: [`+base+`/src.ErrDown]
`)
	both := []string{filepath.Join(root, "dst", DefaultOutput), filepath.Join(root, "src", DefaultOutput)}
	tests := []struct {
		patterns []string
		want     []string
	}{
		{[]string{"./..."}, both},
		{[]string{"./src"}, both},
		{[]string{"./src/..."}, both},
		{[]string{base + "/..."}, both},
		{[]string{base + "/src"}, both},
		{[]string{filepath.Join(root, "src")}, both},
		{[]string{"./dst"}, both[:1]},
		{nil, both[:1]},
		{[]string{"./s"}, nil}, // no such package: an error
	}
	for _, tt := range tests {
		outs, err := Generate(Config{Dir: root, Patterns: tt.patterns, Manifest: "dst/circuitgen.yaml"})
		if tt.want == nil {
			if err == nil {
				t.Errorf("patterns %q: Generate succeeded, want an error", tt.patterns)
			}
			continue
		}
		if err != nil {
			t.Errorf("patterns %q: %v", tt.patterns, err)
			continue
		}
		var got []string
		for _, o := range outs {
			if !strings.HasSuffix(o.Path, "_test.go") {
				got = append(got, o.Path)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("patterns %q: outputs %q, want %q", tt.patterns, got, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "src", DefaultOutput)); err == nil {
		t.Errorf("Generate wrote a file")
	}
}
