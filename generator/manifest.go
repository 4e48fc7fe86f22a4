package generator

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
)

// DefaultOutput is the name of the generated file beside a package's files.
const DefaultOutput = "guarded_gen.go"

// manifest is a circuitgen.yaml file.
type manifest struct {
	// Path is the manifest file; Output the absolute path of its output.
	Path, Output string
	// Defaults are the policy defaults for its interfaces.
	Defaults options
	// Interfaces are the listed interfaces.
	Interfaces []*ifaceSpec
}

// readManifest reads and checks a manifest, recording every problem in errs.
func readManifest(path string, errs *ErrorList) *manifest {
	data, err := os.ReadFile(path)
	if err != nil {
		errs.add(token.Position{}, "read manifest: %v", err)
		return nil
	}
	m := &manifest{Path: path, Output: filepath.Join(filepath.Dir(path), DefaultOutput)}
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			errs.add(token.Position{Filename: path, Line: 1, Column: 1}, "manifest is empty")
			return nil
		}
		errs.add(yamlErrorPos(path, err), "%v", yamlErrorMsg(err))
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
				if bad := badOutput(s); bad != "" {
					r.add(v, "output %q %s", s, bad)
				} else {
					m.Output = filepath.Join(filepath.Dir(path), filepath.FromSlash(s))
				}
			}
		case "defaults":
			m.Defaults = options{}
			for _, kv := range r.mapping(v, "defaults") {
				r.option(m.Defaults, atDefaults, "in defaults", kv[0], kv[1])
			}
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
	errs *ErrorList
}

func (r *manifestReader) pos(n *yaml.Node) token.Position {
	return token.Position{Filename: r.path, Line: n.Line, Column: n.Column}
}

func (r *manifestReader) add(n *yaml.Node, format string, args ...any) {
	r.errs.add(r.pos(n), format, args...)
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
func (r *manifestReader) iface(n *yaml.Node) *ifaceSpec {
	spec := &ifaceSpec{Pos: r.pos(n), Opts: options{}, Methods: map[string]*methodSpec{}, Manifest: true}
	var sawSource bool
	for _, kv := range r.mapping(n, "an interfaces entry") {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "source":
			s, ok := r.str(v, "source")
			if !ok {
				continue
			}
			sawSource = true
			spec.Pos = r.pos(v)
			if i := strings.LastIndex(s, "."); i >= 0 && !strings.Contains(s[i:], "/") {
				spec.PkgPath, spec.Name = s[:i], s[i+1:]
			} else {
				spec.Name = s
			}
			if !token.IsIdentifier(spec.Name) || (spec.PkgPath == "" && strings.Contains(s, ".")) {
				r.add(v, "source %q must be IMPORTPATH.Interface or a bare interface name", s)
				return nil
			}
		case "methods":
			for _, mkv := range r.mapping(v, "methods") {
				spec.Methods[mkv[0].Value] = r.method(mkv[0], mkv[1])
			}
		default:
			r.option(spec.Opts, atInterface, "in an interfaces entry", k, v, "source", "methods")
		}
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
func (r *manifestReader) method(k, n *yaml.Node) *methodSpec {
	ms := &methodSpec{Pos: r.pos(k), Opts: options{}}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return ms
	}
	for _, kv := range r.mapping(n, "method "+k.Value) {
		if kv[0].Value != "skip" {
			r.option(ms.Opts, atMethod, "in method "+k.Value, kv[0], kv[1], "skip")
			continue
		}
		if kv[1].Kind != yaml.ScalarNode || kv[1].Tag != "!!bool" {
			r.add(kv[1], "skip must be true or false")
			continue
		}
		ms.Skip = kv[1].Value == "true"
	}
	return ms
}

// option reads the option k: v given at level l into o; in says where, and
// extra are the keys the caller reads itself, for the message.
func (r *manifestReader) option(o options, l level, in string, k, v *yaml.Node, extra ...string) {
	key := keyNamed(k.Value)
	if key == nil || key.Levels&l == 0 {
		r.add(k, "unknown key %q %s: want %s", k.Value, in, keysAt(l, extra...))
		return
	}
	pos := r.pos(v)
	if !key.list {
		if v.Kind != yaml.ScalarNode || !slices.Contains(key.yamlTags, v.Tag) {
			r.add(v, "%s must be %s", key.Name, key.expects())
			return
		}
		o.setValue(key, v.Value, pos, r.errs)
		return
	}
	s := setting{Pos: pos, Val: []item(nil)}
	if v.Kind != yaml.SequenceNode {
		s.Bad = true
		r.add(v, "%s must be a list of %s", key.Name, key.Value)
	}
	for _, e := range v.Content {
		if v.Kind != yaml.SequenceNode {
			break
		}
		if e.Kind != yaml.ScalarNode || !slices.Contains(key.yamlTags, e.Tag) {
			s.Bad = true
			r.add(e, "a %s entry must be %s", key.Name, key.entry)
			continue
		}
		if !s.addItem(key, e.Value, r.pos(e), r.errs) {
			s.Bad = true
		}
	}
	o[key.Name] = s
}

// yamlErrorPos extracts the line from a yaml.v3 syntax error.
func yamlErrorPos(path string, err error) token.Position {
	pos := token.Position{Filename: path, Line: 1, Column: 1}
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
