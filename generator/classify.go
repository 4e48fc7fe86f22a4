package generator

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
)

// errorIface is the universe's error as an interface.
var errorIface = errorType.Underlying().(*types.Interface)

// classifier resolves the selected errors and statuses of method m.
func (b *builder) classifier(spec *ifaceSpec, it *Interface, m *Method, o options, file *ast.File, where token.Position) *Classifier {
	c := &Classifier{Result: -1}
	// A status given twice (503,503 or 503,503-503) would render as
	// code == 503 || code == 503, which go vet reports.
	for _, s := range o.Statuses.Val {
		if !slices.Contains(c.Statuses, s) {
			c.Statuses = append(c.Statuses, s)
		}
	}
	ok := true
	for _, e := range o.Errors.Val {
		match, resolved := b.resolveError(e, file)
		if resolved {
			c.Errors = append(c.Errors, match)
		}
		ok = ok && resolved
	}
	if len(o.Errors.Val) == 0 && len(o.Statuses.Val) == 0 && ok && !o.Errors.Bad && !o.Statuses.Bad {
		b.errs.add(where, "method %s.%s selects no failure: give errors= or statuses= so that some outcome counts", spec.Name, m.Name)
		return nil
	}
	if !ok {
		return nil
	}
	if len(c.Statuses) > 0 {
		for i, r := range m.Results[:len(m.Results)-1] {
			if k := statusKind(r.Type); k != NoStatus {
				c.Result, c.ResultType, c.ResultKind = i, r.Type, k
				break
			}
		}
	}
	// Methods that classify alike share one classifier.
	key := c.key()
	for _, prev := range b.classifiers {
		if prev.key() == key {
			return prev
		}
	}
	c.Name = b.declare("classify" + camel(m.Circuit))
	c.Circuit = m.Circuit
	b.classifiers = append(b.classifiers, c)
	return c
}

// key identifies what a classifier does: two classifiers with the same key
// are the same function.
func (c *Classifier) key() string {
	var sb strings.Builder
	for _, e := range c.Errors {
		if e.Is {
			fmt.Fprintf(&sb, "is %s.%s;", e.PkgPath, e.Name)
		} else {
			fmt.Fprintf(&sb, "as %s;", types.TypeString(e.Type, nil))
		}
	}
	fmt.Fprintf(&sb, "%v;", c.Statuses)
	if c.Result >= 0 {
		// The result's index is part of the call: methods whose status
		// results are at different places cannot share the function.
		fmt.Fprintf(&sb, "%d %d %s", c.Result, c.ResultKind, types.TypeString(c.ResultType, nil))
	}
	return sb.String()
}

// resolveError resolves one errors= entry: a type becomes an errors.As
// match, a package-level error variable an errors.Is match.
func (b *builder) resolveError(e entry, file *ast.File) (ErrorMatch, bool) {
	name, ptr := strings.CutPrefix(e.Name, "*")
	qual, id := "", name
	if i := strings.LastIndex(name, "."); i >= 0 {
		qual, id = name[:i], name[i+1:]
	}
	if !token.IsIdentifier(id) || strings.HasPrefix(qual, "*") {
		b.errs.add(e.Pos, "%q is not an error type or variable such as *MyError, io.EOF or *net/url.Error", e.Name)
		return ErrorMatch{}, false
	}
	pkg := b.home
	if qual != "" {
		pkg = b.lookupPackage(qual, file)
		if pkg == nil {
			b.errs.add(e.Pos, "unknown package %q in %q: import it in the interface's file or write its full import path", qual, e.Name)
			return ErrorMatch{}, false
		}
	}
	obj := pkg.Scope().Lookup(id)
	if pkg == b.home {
		obj = b.lookup(id)
	}
	if obj == nil {
		b.errs.add(e.Pos, "%s is not declared in package %s", id, pkg.Path())
		return ErrorMatch{}, false
	}
	if pkg != b.home && !obj.Exported() {
		b.errs.add(e.Pos, "%s.%s is not exported", pkg.Path(), id)
		return ErrorMatch{}, false
	}
	switch obj := obj.(type) {
	case *types.TypeName:
		t := obj.Type()
		if n, ok := types.Unalias(t).(*types.Named); ok && n.TypeParams() != nil && n.TypeArgs() == nil {
			b.errs.add(e.Pos, "%s is generic: errors= needs a type that is not", e.Name)
			return ErrorMatch{}, false
		}
		if ptr {
			if types.IsInterface(t) {
				b.errs.add(e.Pos, "%s is a pointer to an interface: write %s", e.Name, name)
				return ErrorMatch{}, false
			}
			t = types.NewPointer(t)
		}
		if !types.Implements(t, errorIface) {
			if !ptr && !types.IsInterface(t) && types.Implements(types.NewPointer(t), errorIface) {
				b.errs.add(e.Pos, "%s does not implement error, but *%s does: write *%s", e.Name, name, name)
			} else {
				b.errs.add(e.Pos, "%s does not implement error", e.Name)
			}
			return ErrorMatch{}, false
		}
		return ErrorMatch{Type: t}, true
	case *types.Var:
		if ptr {
			b.errs.add(e.Pos, "%s is a variable, not a type: write %s", name, name)
			return ErrorMatch{}, false
		}
		if !types.AssignableTo(obj.Type(), errorType) {
			b.errs.add(e.Pos, "%s is a variable of type %s, which is not an error", e.Name, types.TypeString(obj.Type(), types.RelativeTo(b.home)))
			return ErrorMatch{}, false
		}
		return ErrorMatch{Is: true, PkgPath: pkg.Path(), PkgName: pkg.Name(), Name: id}, true
	case *types.Func:
		b.errs.add(e.Pos, "%s is a function, not an error type or variable", e.Name)
	case *types.Const:
		b.errs.add(e.Pos, "%s is a constant, not an error type or variable", e.Name)
	default:
		b.errs.add(e.Pos, "%s is not an error type or variable", e.Name)
	}
	return ErrorMatch{}, false
}

// lookupPackage finds the package a qualifier names: a package the file
// imports under that name, a loaded package with that import path, or the
// target package itself.
func (b *builder) lookupPackage(qual string, file *ast.File) *types.Package {
	if file != nil {
		for _, imp := range file.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				continue
			}
			p := b.l.byPath[path]
			if p == nil {
				continue
			}
			name := p.Name()
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if name == qual {
				return p
			}
		}
	}
	if p := b.l.byPath[qual]; p != nil && p.Scope().Len() > 0 {
		return p
	}
	if qual == b.home.Path() {
		return b.home
	}
	return nil
}

// statusKind reports how a result of type t carries an HTTP status.
func statusKind(t types.Type) StatusKind {
	if hasTypeParam(t) {
		return NoStatus
	}
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		if n, ok := types.Unalias(p.Elem()).(*types.Named); ok && n.Obj().Pkg() != nil &&
			n.Obj().Pkg().Path() == "net/http" && n.Obj().Name() == "Response" {
			return StatusField
		}
	}
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, "StatusCode")
	fn, ok := obj.(*types.Func)
	if !ok {
		return NoStatus
	}
	sig := fn.Type().(*types.Signature)
	if sig.Params().Len() == 0 && sig.Results().Len() == 1 && types.Identical(sig.Results().At(0).Type(), types.Typ[types.Int]) {
		return StatusMethod
	}
	return NoStatus
}

// nilable reports whether a value of type t may be nil.
func nilable(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Interface, *types.Map, *types.Slice, *types.Chan, *types.Signature:
		return true
	}
	return false
}

// hasTypeParam reports whether t mentions a type parameter.
func hasTypeParam(t types.Type) bool {
	found := false
	walkType(t, func(t types.Type) {
		if _, ok := t.(*types.TypeParam); ok {
			found = true
		}
	})
	return found
}
