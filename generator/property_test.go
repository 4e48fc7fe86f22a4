package generator

import (
	"flag"
	"fmt"
	"go/format"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/generator/internal/model"
)

// The property test writes random guarded interfaces as packages inside the
// module, generates their wrappers and vets them all with one go vet run.
//
//	go test ./generator -run TestGeneratedCodeCompiles                 # fixed seed, 40 interfaces' packages
//	go test ./generator -run TestGeneratedCodeCompiles -seed=12345     # another seed
//	CIRCUITGEN_PROP_SEED=12345 CIRCUITGEN_PROP_N=400 go test ./generator -run TestGeneratedCodeCompiles
//	CIRCUITGEN_PROP_KEEP=1 ...                                           # keep the packages on failure
var propSeed = flag.Uint64("seed", 0, "seed of TestGeneratedCodeCompiles (0: $CIRCUITGEN_PROP_SEED, or the fixed default)")

// defaultPropSeed is the seed of an ordinary run, so that CI is reproducible.
const defaultPropSeed = 20240917

// modulePath is the module the generated packages are placed in.
const modulePath = "github.com/circuitgen/circuitgen"

func TestGeneratedCodeCompiles(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	seed := *propSeed
	if seed == 0 {
		if s := os.Getenv("CIRCUITGEN_PROP_SEED"); s != "" {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("CIRCUITGEN_PROP_SEED=%q: %v", s, err)
			}
			seed = v
		}
	}
	if seed == 0 {
		seed = defaultPropSeed
	}
	n := 40
	if testing.Short() {
		n = 15
	}
	if s := os.Getenv("CIRCUITGEN_PROP_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("CIRCUITGEN_PROP_N=%q: want a positive integer", s)
		}
		n = v
	}
	t.Logf("seed %d, %d packages (rerun with -seed=%d)", seed, n, seed)

	root := moduleTempDir(t, "prop-")
	rel, err := filepath.Rel(moduleRoot(t), root)
	if err != nil {
		t.Fatal(err)
	}
	base := modulePath + "/" + filepath.ToSlash(rel)
	putFile(t, filepath.Join(root, "dep", "dep.go"), depSource)

	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var patterns []string
	sources := map[string]string{}    // directory -> input source
	policies := map[string][]string{} // one policy a circuit name, in every package
	for i := range n {
		name := fmt.Sprintf("p%03d", i)
		src := newPropGen(r, base+"/dep", policies).pkg(name)
		formatted, err := format.Source([]byte(src))
		if err != nil {
			t.Fatalf("seed %d: the test wrote invalid Go for %s: %v\n%s", seed, name, err, src)
		}
		dir := filepath.Join(root, name)
		putFile(t, filepath.Join(dir, "api.go"), string(formatted))
		sources[dir] = string(formatted)
		patterns = append(patterns, "./"+name)
	}

	start := time.Now()
	outs, err := Generate(Config{Dir: root, Patterns: patterns})
	if err != nil {
		t.Errorf("seed %d: Generate failed on valid input:\n%v", seed, err)
		for dir, src := range sources {
			if strings.Contains(err.Error(), filepath.Base(dir)+string(filepath.Separator)) {
				t.Logf("%s/api.go:\n%s", filepath.Base(dir), numbered(src))
			}
		}
		t.FailNow()
	}
	if len(outs) != 2*n {
		t.Fatalf("Generate returned %d files for %d packages, want an output and its test file each", len(outs), n)
	}
	genTime := time.Since(start)
	if err := Write(outs); err != nil {
		t.Fatal(err)
	}

	start = time.Now()
	cmd := exec.Command("go", append([]string{"vet"}, patterns...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("seed %d: go vet of the generated packages: %v\n%s", seed, err, out)
		shown := map[string]bool{}
		for _, m := range regexp.MustCompile(`(p\d{3})/`).FindAllStringSubmatch(string(out), -1) {
			if shown[m[1]] || len(shown) >= 3 {
				continue
			}
			shown[m[1]] = true
			dir := filepath.Join(root, m[1])
			gen, _ := os.ReadFile(filepath.Join(dir, DefaultOutput))
			t.Logf("%s/api.go:\n%s\n%s/%s:\n%s", m[1], numbered(sources[dir]), m[1], DefaultOutput, numbered(string(gen)))
		}
		if os.Getenv("CIRCUITGEN_PROP_KEEP") != "" {
			t.Logf("kept %s", root)
			keepTempDir = true
		}
		return
	}
	t.Logf("generate %v, vet %v", genTime.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// keepTempDir leaves the packages of a failed run on disk.
var keepTempDir bool

// moduleRoot returns the module's root directory: the parent of generator/.
func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// moduleTempDir makes a directory under generator/testdata, inside the
// module (so that generated code builds against runtime/circuit) but out of
// ./... patterns, and removes it when the test ends.
func moduleTempDir(t *testing.T, prefix string) string {
	t.Helper()
	var dir string
	var err error
	// Another test process may remove an empty testdata/ meanwhile.
	for range 5 {
		if err = os.MkdirAll("testdata", 0o755); err != nil {
			continue
		}
		if dir, err = os.MkdirTemp("testdata", prefix); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if keepTempDir && t.Failed() {
			return
		}
		os.RemoveAll(abs)
		os.Remove(filepath.Dir(abs)) // testdata/, when nothing else is there
	})
	return abs
}

func putFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// numbered returns src with line numbers, for failure logs.
func numbered(src string) string {
	var b strings.Builder
	for i, line := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, line)
	}
	return b.String()
}

// depSource is a package of the module the random packages use types,
// errors and interfaces from.
const depSource = `package dep

import (
	"context"
	"errors"
)

// Item is a value of another package.
type Item struct{ ID string }

// Box is a generic type of another package.
type Box[T any] struct{ V T }

// Pinger is an interface of another package to embed.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Getter is a generic interface of another package to embed.
type Getter[T any] interface {
	Get(ctx context.Context, key string) (T, error)
}

// DepErr is an error type of another package.
type DepErr struct{ Op string }

func (e *DepErr) Error() string { return "dep: " + e.Op }

// ErrDep is a sentinel of another package.
var ErrDep = errors.New("dep")
`

// propGen writes one random package.
type propGen struct {
	r   *rand.Rand
	dep string
	// imports are the import paths the file uses.
	imports map[string]bool
	// circuits are the circuit names used so far, to share some.
	circuits []string
	// policies are the options of each circuit name.
	policies map[string][]string
}

func newPropGen(r *rand.Rand, dep string, policies map[string][]string) *propGen {
	return &propGen{r: r, dep: dep, imports: map[string]bool{}, policies: policies}
}

func (g *propGen) chance(p float64) bool { return g.r.Float64() < p }

func choose[T any](g *propGen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

// q returns the qualifier of the package at path, importing it.
func (g *propGen) q(path string) string {
	g.imports[path] = true
	return path[strings.LastIndex(path, "/")+1:]
}

// blankUse uses each package once, so that a package imported only for an
// errors= entry is not an unused import.
var blankUse = map[string]string{
	"context": "context.Background", "errors": "errors.New", "fmt": "fmt.Sprint",
	"io": "io.EOF", "net": "net.ParseIP", "net/http": "http.NewRequest",
	"net/url": "url.Parse", "time": "time.Now",
}

// tparam is a type parameter of a generic interface.
type tparam struct{ name, constraint string }

// iface is one random interface.
type randIface struct {
	name    string
	tparams []tparam
}

// The names parameters, results and type parameters are drawn from: names
// of the packages and locals a wrapper uses.
var (
	paramNames = []string{"circuit", "errors", "context", "time", "g", "err", "r0", "r1", "ctx", "next", "b", "target", "code", "ok", "result", "p0", "p1", "http", "url", "x", "req", "opts", "_", "_",
		// Predeclared and package-level names a wrapper's body may use.
		"error", "string", "int", "any", "nil", "bool", "Resp", "Req", "LocalErr", "ErrLocal", "Number"}
	resultNames = []string{"n", "out", "res", "resp", "e", "err", "r0", "circuit", "time", "_", "value"}
	tparamNames = []string{"T", "K", "V", "b", "g", "next", "r0", "result", "target", "code", "ok", "Elem"}
)

func (g *propGen) pkg(dir string) string {
	pkgName := dir
	if g.chance(0.15) {
		pkgName = choose(g, "circuit", "errors", "time", "context", "guarded", "url")
	}
	var body strings.Builder
	body.WriteString(`
// LocalErr is a local error type.
type LocalErr struct{ Msg string }

func (e *LocalErr) Error() string { return e.Msg }

// ErrLocal is a local sentinel.
var ErrLocal = ` + g.q("errors") + `.New("local")

// Req is a local request type.
type Req struct{ N int }

// Resp carries a status through a method.
type Resp struct{ Code int }

// StatusCode returns the status.
func (r *Resp) StatusCode() int { return r.Code }

// Number is a local constraint.
type Number interface{ ~int | ~int64 | ~float64 }

// Base is a local interface to embed.
type Base interface {
	Ping(` + g.q("context") + `.Context) error
}
`)
	n := 1 + g.r.IntN(3)
	var decls []string
	grouped := n > 1 && g.chance(0.3)
	for i := range n {
		decls = append(decls, g.iface(i, pkgName, grouped))
	}
	if grouped {
		body.WriteString("\ntype (\n" + strings.Join(decls, "\n") + ")\n")
	} else {
		for _, d := range decls {
			body.WriteString("\n" + d)
		}
	}
	// Package-level names a wrapper's locals and generated declarations
	// must not clash with.
	for _, c := range g.circuits {
		if g.chance(0.1) {
			fmt.Fprintf(&body, "\nvar policy%s = 1\n", model.Camel(c))
		}
		if g.chance(0.1) {
			fmt.Fprintf(&body, "\nfunc classify%s() {}\n", model.Camel(c))
		}
	}
	// Package-level names like those of packages the wrapper imports but
	// the file does not.
	for _, path := range []string{"time", "circuit", "net/http"} {
		if !g.imports[path] && g.chance(0.1) {
			fmt.Fprintf(&body, "\nvar %s = 1\n", path[strings.LastIndex(path, "/")+1:])
		}
	}
	for _, name := range []string{"next", "target", "code", "ok", "result"} {
		if g.chance(0.05) {
			fmt.Fprintf(&body, "\nvar %s = 1\n", name)
		}
	}
	var paths []string
	for p := range g.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var src strings.Builder
	fmt.Fprintf(&src, "package %s\n\nimport (\n", pkgName)
	for _, p := range paths {
		fmt.Fprintf(&src, "\t%q\n", p)
	}
	src.WriteString(")\n\nvar (\n")
	for _, p := range paths {
		use, ok := blankUse[p]
		if p == g.dep {
			use = "dep.ErrDep"
		} else if !ok {
			panic("no blank use of " + p)
		}
		fmt.Fprintf(&src, "\t_ = %s\n", use)
	}
	src.WriteString(")\n")
	src.WriteString(body.String())
	return src.String()
}

// iface writes one guarded interface declaration, without "type" when
// grouped.
func (g *propGen) iface(i int, pkgName string, grouped bool) string {
	it := &randIface{name: choose(g, "Client", "Store", "API", "Service", "Backend") + strconv.Itoa(i)}
	if g.chance(0.3) {
		taken := map[string]bool{}
		for range 1 + g.r.IntN(3) {
			name := choose(g, tparamNames...)
			if taken[name] {
				continue
			}
			taken[name] = true
			c := choose(g, "any", "comparable", "Number", g.q("fmt")+".Stringer", "~int | ~string", "interface{ ~[]byte | ~string }", "error")
			it.tparams = append(it.tparams, tparam{name, c})
		}
	}

	// Embedded interfaces; their methods can carry no directive, so the
	// guard gives them a circuit and a failure.
	var embeds []string
	if g.chance(0.35) {
		ping := false
		for range 1 + g.r.IntN(2) {
			switch g.r.IntN(5) {
			case 0:
				if !ping {
					embeds, ping = append(embeds, "Base"), true
				}
			case 1:
				if !ping {
					embeds, ping = append(embeds, g.q(g.dep)+".Pinger"), true
				}
			case 2:
				if !slices.Contains(embeds, "io.Closer") {
					embeds = append(embeds, g.q("io")+".Closer")
				}
			case 3:
				if !slices.Contains(embeds, "io.Reader") {
					embeds = append(embeds, g.q("io")+".Reader")
				}
			case 4:
				if !slices.ContainsFunc(embeds, func(s string) bool { return strings.Contains(s, "Getter") }) {
					arg := "int"
					if len(it.tparams) > 0 {
						arg = it.tparams[0].name
					}
					embeds = append(embeds, g.q(g.dep)+".Getter["+arg+"]")
				}
			}
		}
	}

	var guard []string
	ifaceCircuit := len(embeds) > 0 || g.chance(0.35)
	ifaceErrors := len(embeds) > 0 || g.chance(0.4)
	ifaceStatuses := g.chance(0.3)
	if g.chance(0.3) {
		guard = append(guard, "wrapper="+choose(g, "Guarded", "Wrapped", "wrapped", "ñ", "Wrappé", "x")+it.name+"W")
	}
	if ifaceCircuit {
		c := g.circuit()
		guard = append(guard, "circuit="+c)
		guard = append(guard, g.policyOf(c)...)
	} else {
		guard = append(guard, g.policy()...)
	}
	if ifaceErrors {
		guard = append(guard, g.errorsOpt())
	}
	if ifaceStatuses {
		guard = append(guard, g.statusesOpt())
	}

	var b strings.Builder
	if grouped {
		fmt.Fprintf(&b, "\t// %s is random.\n\t//\n\t//circuitgen:guard %s\n\t", it.name, strings.Join(guard, " "))
	} else {
		fmt.Fprintf(&b, "// %s is random.\n//\n//circuitgen:guard %s\ntype ", it.name, strings.Join(guard, " "))
	}
	b.WriteString(it.name)
	if len(it.tparams) > 0 {
		var ps []string
		for _, tp := range it.tparams {
			ps = append(ps, tp.name+" "+tp.constraint)
		}
		b.WriteString("[" + strings.Join(ps, ", ") + "]")
	}
	b.WriteString(" interface {\n")
	for _, e := range embeds {
		b.WriteString("\t" + e + "\n")
	}
	// An interface whose every method is skipped is an error: keep one
	// guarded.
	guarded := slices.ContainsFunc(embeds, func(e string) bool { return !strings.HasSuffix(e, "Closer") })
	for j := range 1 + g.r.IntN(5) {
		m := g.method(it, fmt.Sprintf("M%d_%d", i, j), ifaceCircuit, ifaceErrors || ifaceStatuses)
		guarded = guarded || !strings.Contains(m, "circuitgen:skip")
		b.WriteString(m)
	}
	if !guarded {
		c := g.circuit()
		fmt.Fprintf(&b, "\t//circuitgen:circuit %s %s errors=%s.EOF\n\tM%d_g() error\n", c, strings.Join(g.policyOf(c), " "), g.q("io"), i)
	}
	b.WriteString("}\n")
	return b.String()
}

// method writes one method with its directive.
func (g *propGen) method(it *randIface, name string, ifaceCircuit, ifaceFailure bool) string {
	avoid := map[string]bool{}
	for _, tp := range it.tparams {
		avoid[tp.name] = true
	}
	// Parameters.
	type param struct{ name, typ string }
	var params []param
	if g.chance(0.6) {
		params = append(params, param{choose(g, "ctx", "context", "c", "_", "next", "g"), g.q("context") + ".Context"})
	}
	for range g.r.IntN(4) {
		params = append(params, param{"", g.paramType(it)})
	}
	variadic := len(params) > 0 && g.chance(0.25)
	unnamed := g.chance(0.25)
	used := map[string]bool{}
	for i := range params {
		if unnamed {
			params[i].name = ""
			continue
		}
		if params[i].name == "" || used[params[i].name] {
			params[i].name = choose(g, paramNames...)
		}
		for params[i].name != "_" && (used[params[i].name] || avoid[params[i].name]) {
			params[i].name = choose(g, paramNames...) + strconv.Itoa(i)
		}
		used[params[i].name] = true
	}
	var ps []string
	for i, p := range params {
		typ := p.typ
		if variadic && i == len(params)-1 {
			typ = "..." + typ
		}
		ps = append(ps, strings.TrimSpace(p.name+" "+typ))
	}

	// Results.
	errorLast := g.chance(0.85)
	var results []string
	nres := g.r.IntN(4)
	if errorLast {
		nres = g.r.IntN(4)
	}
	for range nres {
		results = append(results, g.resultType(it))
	}
	if errorLast {
		results = append(results, "error")
	}
	named := len(results) > 0 && g.chance(0.3)
	var rs []string
	for i, typ := range results {
		if named {
			n := choose(g, resultNames...)
			for n != "_" && (used[n] || avoid[n]) {
				n = choose(g, resultNames...) + strconv.Itoa(i)
			}
			used[n] = true
			typ = n + " " + typ
		}
		rs = append(rs, typ)
	}
	sig := name + "(" + strings.Join(ps, ", ") + ")"
	switch {
	case len(rs) == 1 && !named:
		sig += " " + rs[0]
	case len(rs) > 0:
		sig += " (" + strings.Join(rs, ", ") + ")"
	}

	// The directive.
	var dir string
	switch {
	case !errorLast || g.chance(0.12):
		dir = "//circuitgen:skip"
	case ifaceCircuit && ifaceFailure && g.chance(0.3):
		// The interface's circuit and classifier.
	default:
		c := g.circuit()
		words := []string{"//circuitgen:circuit", c}
		words = append(words, g.policyOf(c)...)
		hasErrors, hasStatuses := g.chance(0.6), g.chance(0.4)
		if !ifaceFailure && !hasErrors && !hasStatuses {
			hasErrors = true
		}
		if hasErrors {
			words = append(words, g.errorsOpt())
		}
		if hasStatuses {
			words = append(words, g.statusesOpt())
		}
		dir = strings.Join(words, " ")
	}
	if dir != "" {
		return "\t" + dir + "\n\t" + sig + "\n"
	}
	return "\t" + sig + "\n"
}

// paramType returns a random parameter type.
func (g *propGen) paramType(it *randIface) string {
	if len(it.tparams) > 0 && g.chance(0.3) {
		tp := choose(g, it.tparams...).name
		return choose(g, tp, "[]"+tp, "map[string]"+tp, "func("+tp+") bool", g.q(g.dep)+".Box["+tp+"]")
	}
	switch g.r.IntN(24) {
	case 0:
		return g.q("time") + ".Duration"
	case 1:
		return "*" + g.q("net/url") + ".URL"
	case 2:
		return g.q("net") + ".Addr"
	case 3:
		return g.q("io") + ".Reader"
	case 4:
		return "map[string]int"
	case 5:
		return "[]*" + g.q("net/url") + ".URL"
	case 6:
		return choose(g, "chan int", "<-chan string", "chan<- error")
	case 7:
		return choose(g, "func(int) (string, error)", "func(...int) bool", "func()")
	case 8:
		return "*" + g.q("net/http") + ".Request"
	case 9:
		return choose(g, "Req", "*Req", "[]Req")
	case 10:
		return "[4]byte"
	case 11:
		return "struct{ A int `json:\"a\"` }"
	case 12:
		// A tag holding a backquote, which a raw string cannot hold.
		return "struct {\n\t\tA int \"json:\\\"a`b\\\"\"\n\t}"
	case 13:
		return g.q(g.dep) + ".Item"
	case 14:
		return "*" + g.q(g.dep) + ".Box[int]"
	case 15:
		return "interface{ M() }"
	case 16:
		return "error"
	case 17:
		return "any"
	case 18:
		return "[]byte"
	case 19:
		return "map[" + g.q("time") + ".Duration][]" + g.q("io") + ".Writer"
	default:
		return choose(g, "int", "string", "bool", "float64", "uint8", "rune")
	}
}

// resultType returns a random result type, other than the last error.
func (g *propGen) resultType(it *randIface) string {
	if len(it.tparams) > 0 && g.chance(0.3) {
		tp := choose(g, it.tparams...).name
		return choose(g, tp, "[]"+tp, "*"+g.q(g.dep)+".Box["+tp+"]")
	}
	switch g.r.IntN(16) {
	case 0, 1, 2:
		return "*" + g.q("net/http") + ".Response"
	case 3:
		return "*Resp"
	case 4:
		return g.q("time") + ".Duration"
	case 5:
		return "*" + g.q("net/url") + ".URL"
	case 6:
		return g.q("net") + ".Addr"
	case 7:
		return g.q("io") + ".Reader"
	case 8:
		return "map[string][]int"
	case 9:
		return choose(g, "[]string", "chan int", "<-chan error")
	case 10:
		return choose(g, "func() error", "func(string) (int, bool)")
	case 11:
		return "error"
	case 12:
		return g.q(g.dep) + ".Item"
	default:
		return choose(g, "int", "string", "bool", "[]byte")
	}
}

// circuit returns a random circuit name within the grammar, sometimes one
// used before.
func (g *propGen) circuit() string {
	if len(g.circuits) > 0 && g.chance(0.25) {
		return choose(g, g.circuits...)
	}
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const rest = letters + "0123456789._:-"
	n := 1 + g.r.IntN(24)
	if g.chance(0.05) {
		n = 128
	}
	b := []byte{letters[g.r.IntN(len(letters))]}
	for len(b) < n {
		if g.chance(0.3) {
			b = append(b, rest[len(letters):][g.r.IntN(len(rest)-len(letters))])
		} else {
			b = append(b, rest[g.r.IntN(len(rest))])
		}
	}
	name := string(b)
	g.circuits = append(g.circuits, name)
	return name
}

// policyOf returns the policy options of circuit c: every policy option,
// so that nothing is inherited, chosen at c's first use; one circuit name
// has one policy.
func (g *propGen) policyOf(c string) []string {
	if p, ok := g.policies[c]; ok {
		return p
	}
	p := []string{
		"threshold=" + strconv.Itoa(choose(g, 1, 1000, 1+g.r.IntN(1000))),
		"cooldown=" + g.duration(time.Second, 24*time.Hour),
		"lease=" + g.duration(time.Second, time.Hour),
	}
	g.policies[c] = p
	return p
}

// policy returns random policy options, each within bounds.
func (g *propGen) policy() []string {
	var opts []string
	if g.chance(0.4) {
		opts = append(opts, "threshold="+strconv.Itoa(choose(g, 1, 1000, 1+g.r.IntN(1000))))
	}
	if g.chance(0.4) {
		opts = append(opts, "cooldown="+g.duration(time.Second, 24*time.Hour))
	}
	if g.chance(0.4) {
		opts = append(opts, "lease="+g.duration(time.Second, time.Hour))
	}
	return opts
}

// duration returns a random duration within [lo, hi] as text.
func (g *propGen) duration(lo, hi time.Duration) string {
	switch g.r.IntN(4) {
	case 0:
		return choose(g, lo, hi).String()
	case 1:
		ms := lo.Milliseconds() + g.r.Int64N((hi-lo).Milliseconds()+1)
		return (time.Duration(ms) * time.Millisecond).String()
	default:
		s := int64(lo/time.Second) + g.r.Int64N(int64((hi-lo)/time.Second)+1)
		return (time.Duration(s) * time.Second).String()
	}
}

// errorsOpt returns an errors= option of 1 to 3 valid targets.
func (g *propGen) errorsOpt() string {
	var es []string
	for range 1 + g.r.IntN(3) {
		var e string
		switch g.r.IntN(13) {
		case 0:
			e = g.q("context") + ".DeadlineExceeded"
		case 1:
			e = g.q("context") + ".Canceled"
		case 2:
			e = g.q("io") + ".EOF"
		case 3:
			e = "*" + g.q("net") + ".OpError"
		case 4:
			e = g.q("net") + ".Error"
		case 5:
			e = "*" + g.q("net/url") + ".Error"
		case 6:
			e = "*net/url.Error"
		case 7:
			e = "*LocalErr"
		case 8:
			e = "ErrLocal"
		case 9:
			e = "*" + g.q(g.dep) + ".DepErr"
		case 10:
			e = g.q(g.dep) + ".ErrDep"
		case 11:
			e = "*" + g.dep + ".DepErr"
		case 12:
			e = g.q("io") + ".ErrUnexpectedEOF"
		}
		es = append(es, e)
	}
	return "errors=" + strings.Join(es, ",")
}

// statusesOpt returns a statuses= option of 1 to 3 codes or ranges.
func (g *propGen) statusesOpt() string {
	var ss []string
	for range 1 + g.r.IntN(3) {
		lo := 100 + g.r.IntN(500)
		if g.chance(0.5) {
			ss = append(ss, strconv.Itoa(lo))
		} else {
			ss = append(ss, fmt.Sprintf("%d-%d", lo, lo+g.r.IntN(600-lo)))
		}
	}
	return "statuses=" + strings.Join(ss, ",")
}
