package spec

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/circuitgen/circuitgen/generator/internal/diag"
)

// FuzzDirective reads a //circuitgen: directive, fuzzed, on an interface
// and on its method. Reading never panics, every problem has a position in
// the file, and splitting a directive loses no word.
func FuzzDirective(f *testing.F) {
	for _, s := range [][2]string{
		{"guard wrapper=GuardedBilling threshold=3 cooldown=30s lease=10s", "circuit billing-api errors=*HTTPConnectionError,context.DeadlineExceeded statuses=502-504"},
		{"guard", "circuit billing-api:charge threshold=5 statuses=500-599"},
		{"guard circuit=upstream statuses=503", "skip"},
		{"guard threshold=0 cooldown=-1s lease=2h", "circuit"},
		{"guard wrapper=Bad\"Name", "circuit a=b=c statuses=599-500"},
		{"guard threshold=1001", "circuit ../etc/passwd errors=\x00"},
		{"", "unknown"},
		{"guard\tstatuses=,,,", "circuit x statuses=99999999999999999999"},
		{"guard wrapper=GuardedÅngström\u00a0x", "circuit b\u0085c statuses=503"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, onType, onMethod string) {
		// A line comment ends at the line's end: the directive is one line.
		clean := func(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }
		onType, onMethod = clean(onType), clean(onMethod)
		src := "package p\n\nimport \"context\"\n\n" +
			DirectivePrefix + onType + "\ntype I interface {\n\t" +
			DirectivePrefix + onMethod + "\n\tM(ctx context.Context) error\n}\n"
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
		if err != nil {
			return // not the directive reader's input
		}
		var errs diag.Collector
		_ = ReadDirectives(fset, []*ast.File{file}, "/nonexistent/p", &errs)
		for _, e := range errs.Errors() {
			if e.Pos.Filename != "p.go" || e.Pos.Line < 1 {
				t.Errorf("problem without a position in the file: %v (%+v)", e, e.Pos)
			}
		}
		for _, cg := range file.Comments {
			for _, c := range cg.List {
				d, ok := splitDirective(fset, c)
				if !ok {
					continue
				}
				got := d.kind
				for _, w := range d.words {
					got += " " + w.text
				}
				want := strings.Join(strings.FieldsFunc(c.Text[len(DirectivePrefix):], isSpaceByte), " ")
				if got != want {
					t.Errorf("splitDirective(%q) = %q, want %q", c.Text, got, want)
				}
			}
		}
	})
}

// isSpaceByte is splitDirective's notion of a separator: ASCII white
// space; no byte of a multi-byte character separates words.
func isSpaceByte(r rune) bool {
	return r < 0x80 && strings.ContainsRune(" \t\n\v\f\r", r)
}

// FuzzManifest reads a fuzzed circuitgen.yaml. Reading never panics; a
// manifest that cannot be read reports at least one problem, and every
// problem names the manifest.
func FuzzManifest(f *testing.F) {
	for _, s := range []string{
		"version: 1\noutput: guarded_gen.go\ndefaults: {threshold: 5, cooldown: 30s, probe_lease: 10s}\ninterfaces:\n  - source: net/http.RoundTripper\n    wrapper: GuardedTransport\n    circuit: upstream\n    statuses: [502, 503, 504]\n    errors: [\"*net/url.Error\"]\n    methods:\n      RoundTrip: {circuit: upstream-rt}\n",
		"version: 2\n",
		"",
		"# only a comment\n",
		"---\n...\n",
		"[1, 2]\n",
		"version: 1\nunknown: x\n",
		"version: 1\noutput: ../../etc/x_test.go\n",
		"version: 1\ninterfaces: {a: b}\n",
		"version: 1\ninterfaces:\n  - source: \"\"\n    methods: [1]\n",
		"version: &a 1\nalias: *a\n",
		"version: 1\ndefaults: {threshold: 99999999999999999999, cooldown: -1s}\n",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "circuitgen.yaml")
	f.Fuzz(func(t *testing.T, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		var errs diag.Collector
		m := ReadManifest(path, &errs)
		if m == nil && errs.Len() == 0 {
			t.Fatalf("ReadManifest(%q) = nil with no problem reported", data)
		}
		for _, e := range errs.Errors() {
			if e.Pos.Filename != path {
				t.Errorf("problem not naming the manifest: %v", e)
			}
		}
	})
}
