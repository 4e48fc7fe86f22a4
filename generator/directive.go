package generator

import (
	"go/ast"
	"go/token"
	"strings"
)

const directivePrefix = "//circuitgen:"

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
	if !strings.HasPrefix(c.Text, directivePrefix) {
		return directive{}, false
	}
	base := fset.Position(c.Slash)
	var ws []word
	text := c.Text
	for i := len(directivePrefix); i < len(text); {
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

// directives returns the //circuitgen: directives in a doc comment.
func directives(fset *token.FileSet, doc *ast.CommentGroup, seen map[token.Pos]bool) []directive {
	if doc == nil {
		return nil
	}
	var ds []directive
	for _, c := range doc.List {
		if d, ok := splitDirective(fset, c); ok {
			seen[c.Slash] = true
			ds = append(ds, d)
		}
	}
	return ds
}

// readDirectives returns the interfaces marked //circuitgen:guard in the
// files of one package, target being the package's directory.
func readDirectives(fset *token.FileSet, files []*ast.File, target string, errs *ErrorList) []*ifaceSpec {
	var specs []*ifaceSpec
	for _, f := range files {
		seen := map[token.Pos]bool{}
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
				if spec := readInterface(fset, f, ts, doc, target, seen, errs); spec != nil {
					specs = append(specs, spec)
				}
			}
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if d, ok := splitDirective(fset, c); ok && !seen[c.Slash] {
					errs.add(d.pos, "misplaced directive %s%s: it belongs in the doc comment of an interface type or of its method", directivePrefix, d.kind)
				}
			}
		}
	}
	return specs
}

// readInterface reads the directives of one type declaration.
func readInterface(fset *token.FileSet, f *ast.File, ts *ast.TypeSpec, doc *ast.CommentGroup, target string, seen map[token.Pos]bool, errs *ErrorList) *ifaceSpec {
	// The type may be any type spec: type T pkg.Iface and type A =
	// pkg.Iface are interfaces too, which the builder checks with the
	// type information.
	it, isIface := ts.Type.(*ast.InterfaceType)
	var spec *ifaceSpec
	for _, d := range directives(fset, doc, seen) {
		switch {
		case d.kind != "guard":
			errs.add(d.pos, "%s%s is not allowed on a type: use %sguard", directivePrefix, d.kind, directivePrefix)
		case spec != nil:
			errs.add(d.pos, "duplicate %sguard on %s", directivePrefix, ts.Name.Name)
		default:
			spec = &ifaceSpec{Pos: d.pos, Name: ts.Name.Name, File: f, Target: target, Methods: map[string]*methodSpec{}}
			spec.Opts = readOptions(d, atInterface, errs)
		}
	}
	if !isIface {
		return spec
	}
	for _, field := range it.Methods.List {
		ds := directives(fset, field.Doc, seen)
		if len(ds) == 0 {
			continue
		}
		if len(field.Names) == 0 {
			errs.add(ds[0].pos, "%s%s on an embedded interface: annotate the embedding interface or use a manifest", directivePrefix, ds[0].kind)
			continue
		}
		if spec == nil {
			errs.add(ds[0].pos, "%s%s on a method of %s, which has no %sguard", directivePrefix, ds[0].kind, ts.Name.Name, directivePrefix)
			continue
		}
		name := field.Names[0].Name
		ms := &methodSpec{Pos: ds[0].pos}
		for i, d := range ds {
			if i > 0 {
				errs.add(d.pos, "method %s has more than one %s directive", name, directivePrefix)
				continue
			}
			switch d.kind {
			case "skip":
				ms.Skip = true
				for _, w := range d.words {
					errs.add(w.pos, "%sskip takes no options, found %q", directivePrefix, w.text)
				}
			case "circuit":
				var name *word
				if len(d.words) == 0 || strings.Contains(d.words[0].text, "=") {
					errs.add(d.pos, "%scircuit needs a circuit name first, as in %scircuit billing-api", directivePrefix, directivePrefix)
				} else {
					name, d.words = &d.words[0], d.words[1:]
				}
				ms.Opts = readOptions(d, atMethod, errs)
				if name != nil {
					ms.Opts["circuit"] = setting{Val: name.text, Pos: name.pos}
				}
			case "guard":
				errs.add(d.pos, "%sguard is not allowed on a method: use %scircuit NAME or %sskip", directivePrefix, directivePrefix, directivePrefix)
			default:
				errs.add(d.pos, "unknown directive %s%s: want guard, circuit or skip", directivePrefix, d.kind)
			}
		}
		spec.Methods[name] = ms
	}
	return spec
}

// readOptions reads the key=value words of a directive at level l.
func readOptions(d directive, l level, errs *ErrorList) options {
	o := options{}
	seen := map[string]bool{}
	for _, w := range d.words {
		name, val, ok := strings.Cut(w.text, "=")
		if !ok {
			errs.add(w.pos, "%q is not a key=value option", w.text)
			continue
		}
		vpos := w.pos
		vpos.Column += len(name) + 1
		vpos.Offset += len(name) + 1
		k := keyNamed(name)
		want := keysAt(l)
		if l == atMethod {
			want = strings.TrimPrefix(want, "circuit, ") // it comes first, unnamed
		}
		switch {
		case k == nil:
			errs.add(w.pos, "unknown option %q: want %s", name, want)
		case k.Levels&l == 0 && name == "circuit":
			errs.add(w.pos, "option circuit is not allowed on a method: its circuit name comes first, as in %scircuit NAME", directivePrefix)
		case k.Levels&l == 0:
			errs.add(w.pos, "option %s is not allowed on %s: want %s", name, l, want)
		case val == "":
			errs.add(w.pos, "option %s has no value", name)
		case seen[name]:
			errs.add(w.pos, "duplicate option %q", name)
		default:
			seen[name] = true
			o.setValue(k, val, vpos, errs)
		}
	}
	return o
}
