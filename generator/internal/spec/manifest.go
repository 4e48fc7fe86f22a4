package spec

import (
	"errors"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/circuitgen/circuitgen/generator/internal/diag"
)

// DefaultOutput is the name of the generated file beside a package's files.
const DefaultOutput = "guarded_gen.go"

// Manifest is a circuitgen.yaml file.
type Manifest struct {
	// Path is the manifest file; Output the absolute path of its output.
	Path, Output string
	// Defaults are the policy defaults for its interfaces.
	Defaults Options
	// Interfaces are the listed interfaces.
	Interfaces []*Interface
}

// Sources returns the import paths of the packages m lists interfaces of,
// other than its own.
func (m *Manifest) Sources() []string {
	var paths []string
	for _, s := range m.Interfaces {
		if s.PkgPath != "" && !slices.Contains(paths, s.PkgPath) {
			paths = append(paths, s.PkgPath)
		}
	}
	return paths
}

// BadOutput says what is wrong with the output file name s (a manifest's
// output or -out), or returns "": it must be a .go file the package builds
// with, not a test file.
func BadOutput(s string) string {
	switch {
	case filepath.Ext(s) != ".go":
		return "must name a .go file"
	case strings.HasSuffix(s, "_test.go"):
		return "must not be a _test.go file"
	case strings.HasPrefix(filepath.Base(s), "_") || strings.HasPrefix(filepath.Base(s), "."):
		return "must not start with _ or ., which the go tool ignores"
	case len(NameTags(s)) > 0:
		return fmt.Sprintf("must not end in _%s, which builds it for %s only: the output carries the build constraints of the files declaring what it wraps", strings.Join(NameTags(s), "_"), strings.Join(NameTags(s), " on "))
	}
	return ""
}

// ReadManifest reads and checks the manifest at path; it returns nil when
// the file cannot be read as YAML at all.
func ReadManifest(path string, errs *diag.Collector) *Manifest {
	data, err := os.ReadFile(path)
	if err != nil {
		errs.Add(token.Position{}, "read manifest: %v", err)
		return nil
	}
	m := &Manifest{Path: path, Output: filepath.Join(filepath.Dir(path), DefaultOutput)}
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			errs.Add(diag.FileStart(path), "manifest is empty")
			return nil
		}
		errs.Add(yamlErrorPos(path, err), "%v", yamlErrorMsg(err))
		return nil
	}
	r := &manifestReader{path: path, errs: errs}
	root := doc.Content[0]
	var sawVersion bool
	for _, kv := range r.mapping(root, "manifest") {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "version":
			sawVersion = true
			if n, ok := r.int(v, "version"); ok && n != 1 {
				r.add(v, "unsupported manifest version %d: want 1", n)
			}
		case "output":
			if s, ok := r.str(v, "output"); ok {
				if bad := BadOutput(s); bad != "" {
					r.add(v, "output %q %s", s, bad)
				} else {
					m.Output = filepath.Join(filepath.Dir(path), filepath.FromSlash(s))
				}
			}
		case "defaults":
			m.Defaults = r.options(v, atDefaults, "defaults", "in defaults", nil)
		case "interfaces":
			if v.Kind != yaml.SequenceNode {
				r.add(v, "interfaces must be a list")
				continue
			}
			for _, n := range v.Content {
				if spec := r.iface(n); spec != nil {
					spec.Target = filepath.Dir(m.Output)
					m.Interfaces = append(m.Interfaces, spec)
				}
			}
		default:
			r.add(k, "unknown key %q: want version, output, defaults or interfaces", k.Value)
		}
	}
	if !sawVersion && root.Kind == yaml.MappingNode {
		r.add(root, "manifest has no version: add version: 1")
	}
	return m
}

// manifestReader reads yaml nodes, recording problems at their positions.
type manifestReader struct {
	path string
	errs *diag.Collector
}

func (r *manifestReader) pos(n *yaml.Node) token.Position {
	return token.Position{Filename: r.path, Line: n.Line, Column: n.Column}
}

func (r *manifestReader) add(n *yaml.Node, format string, args ...any) {
	r.errs.Add(r.pos(n), format, args...)
}

// mapping returns the key and value nodes of a mapping, reporting
// duplicate keys.
func (r *manifestReader) mapping(n *yaml.Node, what string) [][2]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		r.add(n, "%s must be a mapping", what)
		return nil
	}
	seen := map[string]bool{}
	var kvs [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			r.add(k, "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		kvs = append(kvs, [2]*yaml.Node{k, n.Content[i+1]})
	}
	return kvs
}

func (r *manifestReader) str(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		r.add(n, "%s must be a string", key)
		return "", false
	}
	return n.Value, true
}

func (r *manifestReader) int(n *yaml.Node, key string) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		r.add(n, "%s must be an integer", key)
		return 0, false
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		r.add(n, "%s %q is out of range", key, n.Value)
		return 0, false
	}
	return v, true
}

// iface reads one entry of interfaces.
func (r *manifestReader) iface(n *yaml.Node) *Interface {
	spec := &Interface{Pos: r.pos(n), Methods: map[string]*Method{}, Manifest: true}
	var sawSource, badSource bool
	own := func(k, v *yaml.Node) bool {
		switch k.Value {
		case "source":
			s, ok := r.str(v, "source")
			if !ok {
				return true
			}
			sawSource = true
			spec.Pos = r.pos(v)
			if i := strings.LastIndex(s, "."); i >= 0 && !strings.Contains(s[i:], "/") {
				spec.PkgPath, spec.Name = s[:i], s[i+1:]
			} else {
				spec.Name = s
			}
			switch {
			case strings.HasPrefix(s, "*"):
				r.add(v, "source %q is a pointer: a manifest guards an interface; for a struct client, circuitgen init -source %s writes an interface of its methods to guard instead", s, strings.TrimPrefix(s, "*"))
				badSource = true
			case !token.IsIdentifier(spec.Name) || (spec.PkgPath == "" && strings.Contains(s, ".")):
				r.add(v, "source %q must be IMPORTPATH.Interface or a bare interface name", s)
				badSource = true
			}
		case "methods":
			for _, mkv := range r.mapping(v, "methods") {
				spec.Methods[mkv[0].Value] = r.method(mkv[0], mkv[1])
			}
		default:
			return false
		}
		return true
	}
	spec.Opts = r.options(n, atInterface, "an interfaces entry", "in an interfaces entry", own, "source", "methods")
	if badSource {
		return nil
	}
	if !sawSource {
		if n.Kind == yaml.MappingNode {
			r.add(n, "interfaces entry has no source")
		}
		return nil
	}
	return spec
}

// method reads one entry of methods.
func (r *manifestReader) method(k, n *yaml.Node) *Method {
	ms := &Method{Pos: r.pos(k)}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return ms
	}
	skip := func(k, v *yaml.Node) bool {
		if k.Value != "skip" {
			return false
		}
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
			r.add(v, "skip must be true or false")
		} else {
			ms.Skip = v.Value == "true"
		}
		return true
	}
	ms.Opts = r.options(n, atMethod, "method "+k.Value, "in method "+k.Value, skip, "skip")
	return ms
}

// options reads the mapping n of options given at level l; what names the
// mapping and in says where it is, for messages. own reads the keys that
// are not options (it returns false for the others; nil reads none), and
// extra are those keys, for the message about an unknown one.
func (r *manifestReader) options(n *yaml.Node, l level, what, in string, own func(k, v *yaml.Node) bool, extra ...string) Options {
	var o Options
	for _, kv := range r.mapping(n, what) {
		k, v := kv[0], kv[1]
		if own != nil && own(k, v) {
			continue
		}
		key := keyNamed(k.Value)
		if key == nil || key.Levels&l == 0 {
			r.add(k, "unknown key %q %s: want %s", k.Value, in, keysAt(l, extra...))
			continue
		}
		r.option(&o, key, v)
	}
	checkLevel(&o, r.errs)
	return o
}

// option decodes the value v of key into o.
func (r *manifestReader) option(o *Options, key *key, v *yaml.Node) {
	s := key.slot(o)
	if !key.list {
		if v.Kind != yaml.ScalarNode || !slices.Contains(key.yamlTags, v.Tag) {
			r.add(v, "%s must be %s", key.Name, key.expects())
			return
		}
		s.setText(key, v.Value, r.pos(v), r.errs)
		return
	}
	s.begin(r.pos(v))
	if v.Kind != yaml.SequenceNode {
		s.markBad()
		r.add(v, "%s must be a list of %s", key.Name, key.Value)
		return
	}
	for _, e := range v.Content {
		if e.Kind != yaml.ScalarNode || !slices.Contains(key.yamlTags, e.Tag) {
			s.markBad()
			r.add(e, "a %s entry must be %s", key.Name, key.entry)
			continue
		}
		if !s.addEntry(key, e.Value, r.pos(e), r.errs) {
			s.markBad()
		}
	}
}

// yamlErrorPos extracts the line from a yaml.v3 syntax error.
func yamlErrorPos(path string, err error) token.Position {
	pos := diag.FileStart(path)
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		var line int
		if _, e := fmt.Sscanf(msg[i:], "line %d", &line); e == nil {
			pos.Line = line
		}
	}
	return pos
}

// yamlErrorMsg strips yaml.v3's prefix and line from a syntax error.
func yamlErrorMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(msg, ": "); strings.HasPrefix(msg, "line ") && i >= 0 {
		msg = msg[i+2:]
	}
	return "invalid YAML: " + msg
}
