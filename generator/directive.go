package generator

import (
	"go/ast"
	"go/token"
	"strings"
	"time"
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
	it, isIface := ts.Type.(*ast.InterfaceType)
	var spec *ifaceSpec
	for _, d := range directives(fset, doc, seen) {
		switch {
		case d.kind != "guard":
			errs.add(d.pos, "%s%s is not allowed on a type: use %sguard", directivePrefix, d.kind, directivePrefix)
		case !isIface:
			errs.add(d.pos, "%sguard on %s, which is not an interface type", directivePrefix, ts.Name.Name)
		case spec != nil:
			errs.add(d.pos, "duplicate %sguard on %s", directivePrefix, ts.Name.Name)
		default:
			spec = &ifaceSpec{Pos: d.pos, Name: ts.Name.Name, File: f, Target: target, Methods: map[string]*methodSpec{}}
			spec.Opts, spec.Wrapper = readOptions(d, true, errs)
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
				ms.Skip = opt[bool]{Val: true, Pos: d.pos, Set: true}
				for _, w := range d.words {
					errs.add(w.pos, "%sskip takes no options, found %q", directivePrefix, w.text)
				}
			case "circuit":
				var circuit opt[string]
				if len(d.words) == 0 || strings.Contains(d.words[0].text, "=") {
					errs.add(d.pos, "%scircuit needs a circuit name first, as in %scircuit billing-api", directivePrefix, directivePrefix)
				} else {
					circuit = opt[string]{Val: d.words[0].text, Pos: d.words[0].pos, Set: true}
					d.words = d.words[1:]
				}
				ms.Opts, _ = readOptions(d, false, errs)
				ms.Opts.Circuit = circuit
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

// readOptions reads the key=value words of a guard (guard true) or circuit
// directive.
func readOptions(d directive, guard bool, errs *ErrorList) (options, opt[string]) {
	var o options
	var wrapper opt[string]
	for _, w := range d.words {
		key, val, ok := strings.Cut(w.text, "=")
		if !ok {
			errs.add(w.pos, "%q is not a key=value option", w.text)
			continue
		}
		vpos := w.pos
		vpos.Column += len(key) + 1
		vpos.Offset += len(key) + 1
		if val == "" {
			errs.add(w.pos, "option %s has no value", key)
			continue
		}
		switch key {
		case "wrapper", "circuit":
			if !guard {
				errs.add(w.pos, "unknown option %q: a method's circuit name comes first, as in %scircuit NAME", key, directivePrefix)
				continue
			}
			v := opt[string]{Val: val, Pos: vpos, Set: true}
			if key == "wrapper" {
				wrapper = v
			} else {
				o.Circuit = v
			}
		default:
			if !setOption(&o, key, val, vpos, errs) {
				want := "threshold, cooldown, lease, errors or statuses"
				if guard {
					want = "wrapper, circuit, " + want
				}
				errs.add(w.pos, "unknown option %q: want %s", key, want)
			}
		}
	}
	return o, wrapper
}

// setOption sets a policy or classifier option given as text. It reports
// false for an unknown key.
func setOption(o *options, key, val string, pos token.Position, errs *ErrorList) bool {
	switch key {
	case "threshold":
		n, err := parseThreshold(val)
		if err != nil {
			errs.add(pos, "%v", err)
			return true
		}
		o.Threshold = opt[int]{Val: n, Pos: pos, Set: true}
	case "cooldown", "lease", "probe_lease":
		name := key
		if key == "probe_lease" {
			name = "lease"
		}
		d, err := parseDuration(key, val)
		if err != nil {
			errs.add(pos, "%v", err)
			return true
		}
		v := opt[time.Duration]{Val: d, Pos: pos, Set: true}
		if name == "lease" {
			o.Lease = v
		} else {
			o.Cooldown = v
		}
	case "errors":
		o.Errors.Set, o.Errors.Pos = true, pos
		off := 0
		for _, part := range strings.Split(val, ",") {
			p := pos
			p.Column += off
			off += len(part) + 1
			if part == "" {
				o.Errors.Bad = true
				errs.add(p, "empty entry in errors=")
				continue
			}
			o.Errors.Val = append(o.Errors.Val, entry{Name: part, Pos: p})
		}
	case "statuses":
		o.Statuses.Set, o.Statuses.Pos = true, pos
		off := 0
		for _, part := range strings.Split(val, ",") {
			p := pos
			p.Column += off
			off += len(part) + 1
			r, err := parseStatus(part)
			if err != nil {
				o.Statuses.Bad = true
				errs.add(p, "%v", err)
				continue
			}
			o.Statuses.Val = append(o.Statuses.Val, r)
		}
	default:
		return false
	}
	return true
}
