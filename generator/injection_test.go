package generator

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The injection tests feed directive and manifest values that try to
// smuggle code into the generated file. Each must be rejected with a
// positioned error and nothing written; unusual values that are valid must
// reach the output only inside Go string literals.

// injectionSource is the package a directive case is written into; %s are
// the words of the guard directive and of the method's directive.
const injectionSource = `package inj

import (
	"context"
	"io"
)

var _ = io.EOF

// T is a local error type.
type T struct{}

func (*T) Error() string { return "t" }

// API is guarded.
//
//circuitgen:guard %s
type API interface {
	//circuitgen:%s
	Get(ctx context.Context) error
}
`

// manifestPackage is the package a manifest case's output goes into.
const manifestPackage = `package man

import "context"

// API is listed in the manifest.
type API interface {
	Get(ctx context.Context) error
}

// T is a local error type.
type T struct{}

func (*T) Error() string { return "t" }
`

// positioned is file:line:col: message.
var positioned = regexp.MustCompile(`^[^\s:]+:[0-9]+:[0-9]+: \S`)

func TestInjectionRejected(t *testing.T) {
	root := moduleTempDir(t, "inject-")
	const okMethod = "circuit ok errors=io.EOF"
	directives := []struct {
		name          string
		guard, method string
		// onMethod marks a problem reported on the method's line, not
		// the guard's.
		onMethod bool
	}{
		{"wrapper with statements", "wrapper=X;func init(){panic(1)}", okMethod, false},
		{"wrapper with statements, no spaces", "wrapper=X;func_init(){panic(1)}", okMethod, false},
		{"wrapper with braces", "wrapper=X{}", okMethod, false},
		{"wrapper with line comment", "wrapper=X//", okMethod, false},
		{"wrapper with block comment", "wrapper=X/*", okMethod, false},
		{"wrapper in backquotes", "wrapper=`X`", okMethod, false},
		{"wrapper in quotes", `wrapper="X"`, okMethod, false},
		{"wrapper qualified", "wrapper=io.X", okMethod, false},
		{"wrapper with generic brackets", "wrapper=X[T]", okMethod, false},
		{"wrapper with non-breaking space", "wrapper=X\u00a0Y", okMethod, false},
		{"wrapper keyword", "wrapper=func", okMethod, false},
		{"wrapper blank", "wrapper=_", okMethod, false},
		{"wrapper predeclared type", "wrapper=error", okMethod, false},
		{"wrapper predeclared value", "wrapper=nil", okMethod, false},
		{"wrapper predeclared function", "wrapper=len", okMethod, false},
		{"wrapper init", "wrapper=init", okMethod, false},
		{"wrapper taken", "wrapper=T", okMethod, false},
		{"guard circuit with quote", `circuit=a"+os.Exit(1)+"`, "skip", false},
		{"guard circuit with backquote", "circuit=a`+os.Exit(1)+`", "skip", false},
		{"method circuit with quote", "", `circuit a"+os.Exit(1)+" errors=io.EOF`, true},
		{"method circuit with backquote", "", "circuit a`b errors=io.EOF", true},
		{"method circuit with backslash", "", `circuit a\nb errors=io.EOF`, true},
		{"method circuit with semicolon", "", "circuit a;os.Exit(1) errors=io.EOF", true},
		{"method circuit with braces", "", "circuit a{} errors=io.EOF", true},
		{"method circuit with comment", "", "circuit a//b errors=io.EOF", true},
		{"method circuit with line separator", "", "circuit a\u2028b errors=io.EOF", true},
		{"method circuit non-ASCII", "", "circuit ä errors=io.EOF", true},
		{"method circuit starting with a digit", "", "circuit 1a errors=io.EOF", true},
		{"method circuit of 129 bytes", "", "circuit a" + strings.Repeat("b", 128) + " errors=io.EOF", true},
		{"errors with an expression", "", "circuit ok errors=io.EOF)||true||(x", true},
		{"errors with an expression, spaced", "", "circuit ok errors=io.EOF) || true || (x", true},
		{"errors with a composite literal", "", "circuit ok errors=*T{}", true},
		{"errors with a composite literal second", "", "circuit ok errors=io.EOF,*T{}", true},
		{"errors with a quoted package", "", `circuit ok errors="io".EOF`, true},
		{"errors parenthesized", "", "circuit ok errors=(io.EOF)", true},
		{"errors with statements", "", "circuit ok errors=T;os.Exit", true},
		{"errors with a call", "", "circuit ok errors=io.EOF()", true},
		{"errors with a comment", "", "circuit ok errors=io.EOF//", true},
		{"errors with a go list flag", "", "circuit ok errors=*-toolexec=/bin/false/x.Err", true},
		{"statuses with statements", "", "circuit ok errors=io.EOF statuses=500;os.Exit(1)", true},
		{"statuses with an expression", "", "circuit ok errors=io.EOF statuses=500-599)||(true", true},
		{"statuses in hex", "", "circuit ok errors=io.EOF statuses=0x1F4", true},
		{"cooldown with statements", "", "circuit ok errors=io.EOF cooldown=1s;x", true},
		{"lease with statements", "", "circuit ok errors=io.EOF lease=1s;x", true},
		{"threshold with statements", "", "circuit ok errors=io.EOF threshold=3;x", true},
		{"threshold with comment", "circuit=ok errors=io.EOF threshold=3//", "skip", false},
	}
	for i, c := range directives {
		t.Run("directive/"+c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(root, fmt.Sprintf("d%02d", i))
			src := fmt.Sprintf(injectionSource, c.guard, c.method)
			putFile(t, filepath.Join(dir, "api.go"), src)
			want := lineOf(t, src, "//circuitgen:guard")
			if c.onMethod {
				want++ // the method's directive is two lines down
				want++
			}
			assertRejected(t, Config{Dir: dir}, dir, "api.go", want)
		})
	}

	const entry = "version: 1\ninterfaces:\n  - source: API\n"
	manifests := []struct {
		name string
		yaml string
		// at is text on the line the problem must be reported at.
		at string
	}{
		{"wrapper with a newline", entry + "    wrapper: \"A\\nfunc init(){}\"\n    circuit: ok\n    errors: [context.Canceled]\n", "wrapper:"},
		{"wrapper with statements", entry + "    wrapper: \"X;func init(){panic(1)}\"\n    circuit: ok\n    errors: [context.Canceled]\n", "wrapper:"},
		{"wrapper with braces", entry + "    wrapper: X{}\n    circuit: ok\n    errors: [context.Canceled]\n", "wrapper:"},
		{"wrapper with a comment", entry + "    wrapper: \"X//\"\n    circuit: ok\n    errors: [context.Canceled]\n", "wrapper:"},
		{"wrapper predeclared", entry + "    wrapper: error\n    circuit: ok\n    errors: [context.Canceled]\n", "wrapper:"},
		{"wrapper empty", entry + "    wrapper: \"\"\n    circuit: ok\n    errors: [context.Canceled]\n", "wrapper:"},
		{"circuit with a quote", entry + "    circuit: 'a\"+os.Exit(1)+\"'\n    errors: [context.Canceled]\n", "circuit:"},
		{"circuit with a newline", entry + "    circuit: \"a\\nfunc init() {}\"\n    errors: [context.Canceled]\n", "circuit:"},
		{"circuit with a backquote", entry + "    circuit: \"a`b\"\n    errors: [context.Canceled]\n", "circuit:"},
		{"circuit with a NUL", entry + "    circuit: \"a\\0b\"\n    errors: [context.Canceled]\n", "circuit:"},
		{"method circuit with a newline", entry + "    errors: [context.Canceled]\n    methods:\n      Get: {circuit: \"x\\n}\\nfunc init() {\"}\n", "Get:"},
		{"errors with an expression", entry + "    circuit: ok\n    errors: [\"context.Canceled) || true || (x\"]\n", "errors:"},
		{"errors with a composite literal", entry + "    circuit: ok\n    errors: [\"*T{}\"]\n", "errors:"},
		{"errors with a newline", entry + "    circuit: ok\n    errors: [\"context.Canceled\\nfunc init(){}\"]\n", "errors:"},
		{"errors with a go list flag", entry + "    circuit: ok\n    errors: [\"*-toolexec=/bin/false/x.Err\"]\n", "errors:"},
		{"statuses with statements", entry + "    circuit: ok\n    statuses: [\"500;os.Exit(1)\"]\n", "statuses:"},
		{"statuses with a newline", entry + "    circuit: ok\n    statuses: [\"503\\n\"]\n", "statuses:"},
		{"cooldown with statements", entry + "    circuit: ok\n    errors: [context.Canceled]\n    cooldown: 1s;x\n", "cooldown:"},
		{"probe_lease with a newline", entry + "    circuit: ok\n    errors: [context.Canceled]\n    probe_lease: \"1s\\nx\"\n", "probe_lease:"},
		{"threshold as text", entry + "    circuit: ok\n    errors: [context.Canceled]\n    threshold: 3;x\n", "threshold:"},
		{"defaults cooldown with statements", "version: 1\ndefaults: {cooldown: \"1s;x\"}\ninterfaces:\n  - source: API\n    circuit: ok\n    errors: [context.Canceled]\n", "defaults:"},
		{"source with a quote", "version: 1\ninterfaces:\n  - source: 'net/http\".RoundTripper'\n    circuit: ok\n    errors: [context.Canceled]\n", "source:"},
		{"source with a newline", "version: 1\ninterfaces:\n  - source: \"API\\nfunc init(){}\"\n    circuit: ok\n    errors: [context.Canceled]\n", "source:"},
		{"source closing the import", "version: 1\ninterfaces:\n  - source: '\"; import \"os'\n    circuit: ok\n    errors: [context.Canceled]\n", "source:"},
		{"source with a quoted path", "version: 1\ninterfaces:\n  - source: '\"os\".File'\n    circuit: ok\n    errors: [context.Canceled]\n", "source:"},
		{"source as a go list flag", "version: 1\ninterfaces:\n  - source: -toolexec=/bin/false.API\n    circuit: ok\n    errors: [context.Canceled]\n", "source:"},
		{"method name with code", entry + "    circuit: ok\n    errors: [context.Canceled]\n    methods:\n      \"Get(); func init(){}\": {circuit: x}\n", "Get()"},
	}
	for i, c := range manifests {
		t.Run("manifest/"+c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(root, fmt.Sprintf("m%02d", i))
			putFile(t, filepath.Join(dir, "doc.go"), manifestPackage)
			putFile(t, filepath.Join(dir, "circuitgen.yaml"), c.yaml)
			assertRejected(t, Config{Dir: dir, Manifest: "circuitgen.yaml"}, dir, "circuitgen.yaml", lineOf(t, c.yaml, c.at))
		})
	}
}

// lineOf returns the 1-based line of the first line of src containing s.
func lineOf(t *testing.T, src, s string) int {
	t.Helper()
	i := strings.Index(src, s)
	if i < 0 {
		t.Fatalf("%q not in the case's source", s)
	}
	return strings.Count(src[:i], "\n") + 1
}

// assertRejected runs the generator as the CLI does (write only when there
// is no error) and checks it failed with positioned errors, one of them at
// file:line, and wrote nothing.
func assertRejected(t *testing.T, cfg Config, dir, file string, line int) {
	t.Helper()
	before := listDir(t, dir)
	outs, err := Generate(cfg)
	if err == nil {
		if werr := Write(outs); werr != nil {
			t.Error(werr)
		}
		for _, o := range outs {
			t.Errorf("accepted; it generated %s:\n%s", o.Path, o.Content)
		}
		t.FailNow()
	}
	if outs != nil {
		t.Errorf("Generate failed but returned %d outputs", len(outs))
	}
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("not a list of positioned problems: %v", err)
	}
	found := false
	for _, e := range list {
		if !positioned.MatchString(e.Error()) || e.Pos.Line < 1 || e.Pos.Column < 1 {
			t.Errorf("problem without file:line:col: %q", e.Error())
		}
		if filepath.Base(e.Pos.Filename) == file && e.Pos.Line == line {
			found = true
		}
	}
	if !found {
		t.Errorf("no problem reported at %s:%d; got:\n%v", file, line, err)
	}
	if after := listDir(t, dir); !slices.Equal(before, after) {
		t.Errorf("files changed: before %v, after %v", before, after)
	}
	t.Logf("%v", err)
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestUnusualValuesStayInStrings generates from unusual but valid directive
// and manifest values. Every circuit name reaches the output only inside a
// string literal (and in comments, which a name cannot end: it holds no
// newline), and the outputs compile and vet. The last cases are
// regressions the property test found.
func TestUnusualValuesStayInStrings(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root := moduleTempDir(t, "unusual-")
	long := "Z" + strings.Repeat("y.x_w:v-", 15) + "u.t_s:r"
	if len(long) != 128 {
		t.Fatalf("long name has %d bytes", len(long))
	}
	cases := []struct {
		name     string
		files    map[string]string
		manifest string
		// names are the circuit names to trace in the output.
		names []string
	}{
		{
			name: "punctuation",
			files: map[string]string{"api.go": `package p

import (
	"context"
	"io"
	"net/http"
)

var _ = io.EOF

//circuitgen:guard circuit=Zq.y_x:w-v9 errors=io.EOF
type API interface {
	//circuitgen:circuit a.b_c:d-e statuses=500-599
	Get(ctx context.Context) (*http.Response, error)
	//circuitgen:circuit ` + long + ` threshold=1000 cooldown=24h lease=1h errors=io.EOF
	Put(ctx context.Context, v []byte) error
	Del(ctx context.Context) error
	//circuitgen:circuit A-B errors=context.DeadlineExceeded
	Same(ctx context.Context) error
	//circuitgen:circuit A_B errors=context.DeadlineExceeded
	Similar(ctx context.Context) error
}
`},
			names: []string{"Zq.y_x:w-v9", "a.b_c:d-e", long, "A-B", "A_B"},
		},
		{
			name: "manifest",
			files: map[string]string{"doc.go": `package m

import "context"

// API is listed in the manifest.
type API interface {
	Get(ctx context.Context) error
	Put(ctx context.Context) error
}
`},
			manifest: `version: 1
interfaces:
  - source: API
    wrapper: Wrappé
    circuit: "m.n_o:p-q"
    errors: [context.Canceled, "*net/url.Error"]
    methods:
      Put: {circuit: 'M-9:._x', statuses: ["503", 500-599]}
`,
			names: []string{"m.n_o:p-q", "M-9:._x"},
		},
		{
			name: "wrappers named like imports",
			files: map[string]string{"api.go": `package p

import (
	"context"
	"time"
)

//circuitgen:guard wrapper=circuit circuit=c1 errors=context.Canceled
type A interface {
	Get(ctx context.Context, d time.Duration) error
}

//circuitgen:guard wrapper=errors circuit=c2 errors=context.Canceled
type B interface {
	Get(ctx context.Context) error
}
`},
			names: []string{"c1", "c2"},
		},
		{
			name: "package-level names like imports",
			files: map[string]string{"api.go": `package p

import "context"

var circuit, time = 1, 2

//circuitgen:guard circuit=pkg-names errors=context.Canceled cooldown=1m
type API interface {
	Get(ctx context.Context) error
}
`},
			names: []string{"pkg-names"},
		},
		{
			name: "parameters named like predeclared and local types",
			files: map[string]string{"api.go": `package p

import "context"

// Resp is a local result.
type Resp struct{}

//circuitgen:guard circuit=shadow errors=context.Canceled
type API interface {
	Get(ctx context.Context, error string, int bool, Resp int, nil any) (Resp, int, error)
}
`},
			names: []string{"shadow"},
		},
		{
			name:  "struct tag with a backquote",
			files: map[string]string{"api.go": "package p\n\nimport \"context\"\n\n//circuitgen:guard circuit=tags errors=context.Canceled\ntype API interface {\n\tGet(ctx context.Context, s struct {\n\t\tA int \"json:\\\"a`b\\\"\"\n\t\tB int `json:\"b\"`\n\t}) error\n}\n"},
			names: []string{"tags"},
		},
		{
			name: "status results at different places",
			files: map[string]string{"api.go": `package p

import (
	"context"
	"net/http"
)

//circuitgen:guard circuit=statuses statuses=503,503,500-599,500-599
type API interface {
	First(ctx context.Context) (*http.Response, int, error)
	Second(ctx context.Context) (int, *http.Response, error)
}
`},
			names: []string{"statuses"},
		},
	}
	var patterns []string
	for i, c := range cases {
		dir := filepath.Join(root, fmt.Sprintf("u%02d", i))
		for name, src := range c.files {
			putFile(t, filepath.Join(dir, name), src)
		}
		cfg := Config{Dir: dir}
		if c.manifest != "" {
			putFile(t, filepath.Join(dir, "circuitgen.yaml"), c.manifest)
			cfg.Manifest = "circuitgen.yaml"
		}
		ok := t.Run(c.name, func(t *testing.T) {
			outs, err := Generate(cfg)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if err := Write(outs); err != nil {
				t.Fatal(err)
			}
			for _, o := range outs {
				if strings.HasSuffix(o.Path, "_test.go") {
					continue // the assertions name no circuit
				}
				for _, name := range c.names {
					assertOnlyInStrings(t, o.Path, o.Content, name)
				}
			}
		})
		if ok {
			patterns = append(patterns, "./"+filepath.Base(dir))
		}
	}
	if len(patterns) == 0 {
		return
	}
	cmd := exec.Command("go", append([]string{"vet"}, patterns...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go vet: %v\n%s", err, out)
		for _, p := range patterns {
			data, _ := os.ReadFile(filepath.Join(root, p, DefaultOutput))
			t.Logf("%s/%s:\n%s", p, DefaultOutput, numbered(string(data)))
		}
	}
}

// assertOnlyInStrings checks that every occurrence of name in the Go file
// src lies inside a string literal, a line comment or an identifier, and
// that some string literal holds exactly name.
func assertOnlyInStrings(t *testing.T, path string, src []byte, name string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	type span struct{ lo, hi int }
	var strs, comments, idents []span
	exact := 0
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				strs = append(strs, span{fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset})
				if v, err := strconv.Unquote(n.Value); err == nil && v == name {
					exact++
				}
			}
		case *ast.Ident:
			// Identifiers are made from a name's letters and digits
			// (a field named after its circuit), which cannot hold code.
			idents = append(idents, span{fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset})
		}
		return true
	})
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if !strings.HasPrefix(c.Text, "//") || strings.ContainsAny(c.Text, "\n\r") {
				t.Errorf("%s: unexpected comment %q", fset.Position(c.Pos()), c.Text)
			}
			comments = append(comments, span{fset.Position(c.Pos()).Offset, fset.Position(c.End()).Offset})
		}
	}
	within := func(spans []span, lo, hi int) bool {
		return slices.ContainsFunc(spans, func(s span) bool { return s.lo <= lo && hi <= s.hi })
	}
	text := string(src)
	for off := 0; ; {
		i := strings.Index(text[off:], name)
		if i < 0 {
			break
		}
		lo := off + i
		hi := lo + len(name)
		if !within(strs, lo, hi) && !within(comments, lo, hi) && !within(idents, lo, hi) {
			t.Errorf("%s: circuit name %q outside a string literal: %q", fset.Position(f.FileStart+token.Pos(lo)), name, lineAround(text, lo))
		}
		off = lo + 1
	}
	if exact == 0 {
		t.Errorf("%s: no string literal holds circuit name %q", path, name)
	}
}

// lineAround returns the line of text holding offset i.
func lineAround(text string, i int) string {
	lo := strings.LastIndexByte(text[:i], '\n') + 1
	hi := strings.IndexByte(text[i:], '\n')
	if hi < 0 {
		return text[lo:]
	}
	return text[lo : i+hi]
}
