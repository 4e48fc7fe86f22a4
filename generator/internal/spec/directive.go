package spec

import (
	"go/ast"
	"go/token"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/diag"
)

// DirectivePrefix starts every circuitgen directive.
const DirectivePrefix = "//circuitgen:"

// word is a space-separated word of a directive and its position.
type word struct {
	text string
	pos  token.Position
}

// directive is one //circuitgen: comment.
type directive struct {
	kind  string // guard, circuit or skip
	pos   token.Position
	words []word // the words after the kind
}

// splitDirective splits a //circuitgen: comment into its kind and words.
func splitDirective(fset *token.FileSet, c *ast.Comment) (directive, bool) {
	if !strings.HasPrefix(c.Text, DirectivePrefix) {
		return directive{}, false
	}
	base := fset.Position(c.Slash)
	var ws []word
	text := c.Text
	for i := len(DirectivePrefix); i < len(text); {
		if isSpace(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && !isSpace(text[j]) {
			j++
		}
		p := base
		p.Offset += i
		p.Column += i
		ws = append(ws, word{text: text[i:j], pos: p})
		i = j
	}
	d := directive{pos: base}
	if len(ws) > 0 {
		// The kind is glued to the prefix.
		d.kind = ws[0].text
		d.words = ws[1:]
	}
	return d, true
}

// isSpace reports whether b separates the words of a directive: ASCII
// white space only, so that a word's UTF-8 bytes are never split.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// directiveReader reads the directives of one package's files.
type directiveReader struct {
	fset   *token.FileSet
	errs   *diag.Collector
	target string
	// seen are the directives read where they belong, in the current file.
	seen map[token.Pos]bool
}

// ReadDirectives returns the interfaces marked //circuitgen:guard in the
// files of one package, target being the package's directory.
func ReadDirectives(fset *token.FileSet, files []*ast.File, target string, errs *diag.Collector) []*Interface {
	r := &directiveReader{fset: fset, errs: errs, target: target}
	var specs []*Interface
	for _, f := range files {
		r.seen = map[token.Pos]bool{}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				if spec := r.iface(f, ts, doc); spec != nil {
					specs = append(specs, spec)
				}
			}
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if d, ok := splitDirective(fset, c); ok && !r.seen[c.Slash] {
					errs.Add(d.pos, "misplaced directive %s%s: it belongs in the doc comment of an interface type or of its method", DirectivePrefix, d.kind)
				}
			}
		}
	}
	return specs
}

// directives returns the //circuitgen: directives in a doc comment.
func (r *directiveReader) directives(doc *ast.CommentGroup) []directive {
	if doc == nil {
		return nil
	}
	var ds []directive
	for _, c := range doc.List {
		if d, ok := splitDirective(r.fset, c); ok {
			r.seen[c.Slash] = true
			ds = append(ds, d)
		}
	}
	return ds
}

// iface reads the directives of one type declaration.
func (r *directiveReader) iface(f *ast.File, ts *ast.TypeSpec, doc *ast.CommentGroup) *Interface {
	// The type may be any type spec: type T pkg.Iface and type A =
	// pkg.Iface are interfaces too, which the model checks with the
	// type information.
	var spec *Interface
	for _, d := range r.directives(doc) {
		switch {
		case d.kind != "guard":
			r.errs.Add(d.pos, "%s%s is not allowed on a type: use %sguard", DirectivePrefix, d.kind, DirectivePrefix)
		case spec != nil:
			r.errs.Add(d.pos, "duplicate %sguard on %s", DirectivePrefix, ts.Name.Name)
		default:
			spec = &Interface{Pos: d.pos, Name: ts.Name.Name, File: f, Target: r.target, Methods: map[string]*Method{}}
			spec.Opts = r.options(d, atInterface)
		}
	}
	it, isIface := ts.Type.(*ast.InterfaceType)
	if !isIface {
		return spec
	}
	for _, field := range it.Methods.List {
		ds := r.directives(field.Doc)
		switch {
		case len(ds) == 0:
		case len(field.Names) == 0:
			r.errs.Add(ds[0].pos, "%s%s on an embedded interface: annotate the embedding interface or use a manifest", DirectivePrefix, ds[0].kind)
		case spec == nil:
			r.errs.Add(ds[0].pos, "%s%s on a method of %s, which has no %sguard", DirectivePrefix, ds[0].kind, ts.Name.Name, DirectivePrefix)
		default:
			spec.Methods[field.Names[0].Name] = r.method(field.Names[0].Name, ds)
		}
	}
	return spec
}

// method reads the directives of the method called name.
func (r *directiveReader) method(name string, ds []directive) *Method {
	ms := &Method{Pos: ds[0].pos}
	for _, d := range ds[1:] {
		r.errs.Add(d.pos, "method %s has more than one %s directive", name, DirectivePrefix)
	}
	d := ds[0]
	switch d.kind {
	case "skip":
		ms.Skip = true
		for _, w := range d.words {
			r.errs.Add(w.pos, "%sskip takes no options, found %q", DirectivePrefix, w.text)
		}
	case "circuit":
		var circuit *word
		if len(d.words) == 0 || strings.Contains(d.words[0].text, "=") {
			r.errs.Add(d.pos, "%scircuit needs a circuit name first, as in %scircuit billing-api", DirectivePrefix, DirectivePrefix)
		} else {
			circuit, d.words = &d.words[0], d.words[1:]
		}
		ms.Opts = r.options(d, atMethod)
		if circuit != nil {
			ms.Opts.Circuit.setText(keyNamed("circuit"), circuit.text, circuit.pos, r.errs)
		}
	case "guard":
		r.errs.Add(d.pos, "%sguard is not allowed on a method: use %scircuit NAME or %sskip", DirectivePrefix, DirectivePrefix, DirectivePrefix)
	default:
		r.errs.Add(d.pos, "unknown directive %s%s: want guard, circuit or skip", DirectivePrefix, d.kind)
	}
	return ms
}

// options reads the key=value words of a directive at level l.
func (r *directiveReader) options(d directive, l level) Options {
	var o Options
	seen := map[string]bool{}
	want := keysAt(l)
	if l == atMethod {
		want = strings.TrimPrefix(want, "circuit, ") // it comes first, unnamed
	}
	for _, w := range d.words {
		name, val, ok := strings.Cut(w.text, "=")
		if !ok {
			r.errs.Add(w.pos, "%q is not a key=value option", w.text)
			continue
		}
		vpos := w.pos
		vpos.Column += len(name) + 1
		vpos.Offset += len(name) + 1
		k := keyNamed(name)
		switch {
		case k == nil:
			r.errs.Add(w.pos, "unknown option %q: want %s", name, want)
		case k.Levels&l == 0 && name == "circuit":
			r.errs.Add(w.pos, "option circuit is not allowed on a method: its circuit name comes first, as in %scircuit NAME", DirectivePrefix)
		case k.Levels&l == 0:
			r.errs.Add(w.pos, "option %s is not allowed on %s: want %s", name, l, want)
		case val == "":
			r.errs.Add(w.pos, "option %s has no value", name)
		case seen[name]:
			r.errs.Add(w.pos, "duplicate option %q", name)
		default:
			seen[name] = true
			decodeText(&o, k, val, vpos, r.errs)
		}
	}
	checkLevel(&o, r.errs)
	return o
}

// decodeText decodes the text value of key k given at pos into o, one
// entry at a time for a list: the comma-separated parts, at their own
// columns.
func decodeText(o *Options, k *key, text string, pos token.Position, errs *diag.Collector) {
	s := k.slot(o)
	if !k.list {
		s.setText(k, text, pos, errs)
		return
	}
	s.begin(pos)
	off := 0
	for _, part := range strings.Split(text, ",") {
		p := pos
		p.Column += off
		p.Offset += off
		off += len(part) + 1
		if !s.addEntry(k, part, p, errs) {
			s.markBad()
		}
	}
}
