package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/spec"
)

// errorIface is the universe's error as an interface.
var errorIface = errorType.Underlying().(*types.Interface)

// classifier resolves the classifier of method m, declared in package
// client: the function classifier= names, or the errors, statuses and
// codes it selects.
func (b *builder) classifier(s *spec.Interface, m *Method, o *spec.Options, file *ast.File, client *types.Package, where token.Position) *Classifier {
	if o.Classifier.Set {
		return b.classifierFunc(m, o.Classifier.Val, o.Classifier.Pos, file)
	}
	c := &Classifier{Result: -1}
	for _, e := range o.Statuses.Entries {
		c.Statuses = append(c.Statuses, e.Val)
	}
	for _, e := range o.Codes.Entries {
		c.Codes = append(c.Codes, e.Val)
	}
	ok := !o.Errors.Bad && !o.Statuses.Bad && !o.Codes.Bad
	for _, e := range o.Errors.Entries {
		match, resolved := b.resolveError(e, file)
		// One error may be named two ways (context.Canceled, and the
		// same through an import's alias).
		if resolved && !slices.ContainsFunc(c.Errors, match.same) {
			c.Errors = append(c.Errors, match)
		}
		ok = ok && resolved
	}
	if !ok {
		return nil
	}
	if len(c.Errors) == 0 && len(c.Statuses) == 0 && len(c.Codes) == 0 {
		b.errs.Add(where, "method %s.%s selects no failure: give errors=, statuses=, codes= or classifier= so that some outcome counts", s.Name, m.Name)
		return nil
	}
	if len(c.Statuses) > 0 {
		c.StatusErrors, _ = b.statusErrors(client, m)
	}
	if len(c.Statuses) > 0 && m.Shape == ErrorLast {
		for i, r := range m.Results[:len(m.Results)-1] {
			if k := statusKind(r.Type); k != NoStatus {
				c.Result, c.ResultType, c.ResultKind = i, r.Type, k
				break
			}
		}
	}
	// A call the caller cancelled is not the provider's failure, whatever
	// error carries its cancellation, unless context.Canceled is selected.
	c.Ctx = !slices.ContainsFunc(c.Errors, func(e ErrorMatch) bool {
		return e.Value != nil && e.Value.Pkg().Path() == "context" && e.Value.Name() == "Canceled"
	})
	// Methods that classify alike share one classifier.
	key := c.key()
	for _, prev := range b.file.Classifiers {
		if prev.key() == key {
			return prev
		}
	}
	b.file.Classifiers = append(b.file.Classifiers, c)
	return c
}

// classifierFunc resolves classifier=name for method m: a function
// func(error) circuit.Outcome, or func(R, error) circuit.Outcome with R the
// method's first result.
func (b *builder) classifierFunc(m *Method, name string, pos token.Position, file *ast.File) *Classifier {
	pkg, id, ok := b.resolveName(name, pos, file, "a function such as classify or pkg.Classify")
	if !ok {
		return nil
	}
	fn, isFunc := pkg.Scope().Lookup(id).(*types.Func)
	if !isFunc {
		b.errs.Add(pos, "classifier %s is not a function", name)
		return nil
	}
	sig := fn.Type().(*types.Signature)
	outcome := sig.Results().Len() == 1 && isNamed(sig.Results().At(0).Type(), CircuitPath, "Outcome")
	params := sig.Params()
	last := params.Len() > 0 && types.Identical(params.At(params.Len()-1).Type(), errorType)
	c := &Classifier{Func: fn, Result: -1}
	switch {
	case !outcome || !last || sig.Variadic() || sig.TypeParams() != nil || params.Len() > 2:
	case params.Len() == 1:
		return c
	case m.Shape == ErrorLast && len(m.Results) > 1 && types.Identical(params.At(0).Type(), m.Results[0].Type):
		c.Result = 0
		return c
	}
	want := "func(error) circuit.Outcome"
	if m.Shape == ErrorLast && len(m.Results) > 1 {
		want += " or func(" + types.TypeString(m.Results[0].Type, b.qualifier) + ", error) circuit.Outcome"
	}
	b.errs.Add(pos, "classifier %s has type %s, but method %s needs %s", name, types.TypeString(sig, b.qualifier), m.Name, want)
	return nil
}

// same reports whether m and o select the same error.
func (m ErrorMatch) same(o ErrorMatch) bool {
	if m.Value != nil || o.Value != nil {
		return m.Value == o.Value
	}
	return types.Identical(m.Type, o.Type)
}

// key identifies what a classifier does: two classifiers with the same key
// are the same function.
func (c *Classifier) key() string {
	var sb strings.Builder
	for _, e := range c.Errors {
		if e.Value != nil {
			fmt.Fprintf(&sb, "is %s.%s;", e.Value.Pkg().Path(), e.Value.Name())
		} else {
			fmt.Fprintf(&sb, "as %s;", types.TypeString(e.Type, nil))
		}
	}
	fmt.Fprintf(&sb, "%v;%v;%v;", c.Statuses, c.Codes, c.Ctx)
	for _, e := range c.StatusErrors {
		fmt.Fprintf(&sb, "status %s.%s;", types.TypeString(e.Type, nil), e.Read)
	}
	if c.Result >= 0 {
		// The result's index is part of the call: methods whose status
		// results are at different places cannot share the function.
		fmt.Fprintf(&sb, "%d %d %s", c.Result, c.ResultKind, types.TypeString(c.ResultType, nil))
	}
	return sb.String()
}

// resolveError resolves one errors= entry: a type becomes an errors.As
// match, a package-level error variable an errors.Is match.
func (b *builder) resolveError(e spec.Entry[string], file *ast.File) (ErrorMatch, bool) {
	name, ptr := strings.CutPrefix(e.Val, "*")
	pkg, id, ok := b.resolveName(name, e.Pos, file, "an error type, variable or constant such as *MyError, io.EOF or *net/url.Error")
	if !ok {
		return ErrorMatch{}, false
	}
	switch obj := pkg.Scope().Lookup(id).(type) {
	case *types.TypeName:
		return b.errorType(e, name, ptr, obj.Type())
	case *types.Var:
		if ptr {
			b.errs.Add(e.Pos, "%s is a variable, not a type: write %s", name, name)
			return ErrorMatch{}, false
		}
		if !types.AssignableTo(obj.Type(), errorType) {
			b.errs.Add(e.Pos, "%s is a variable of type %s, which is not an error", e.Val, types.TypeString(obj.Type(), b.qualifier))
			return ErrorMatch{}, false
		}
		return ErrorMatch{Value: obj}, true
	case *types.Const:
		// A constant of an error type (kafka-go's kafka.Error is an int
		// whose constants errors.Is matches).
		if ptr {
			b.errs.Add(e.Pos, "%s is a constant, not a type: write %s", name, name)
			return ErrorMatch{}, false
		}
		if !types.Implements(obj.Type(), errorIface) {
			b.errs.Add(e.Pos, "%s is a constant of type %s, which does not implement error: select the errors it becomes, or name a func(error) circuit.Outcome with classifier=", e.Val, types.TypeString(obj.Type(), b.qualifier))
			return ErrorMatch{}, false
		}
		return ErrorMatch{Value: obj}, true
	case *types.Func:
		b.errs.Add(e.Pos, "%s is a function, not an error type, variable or constant: name a func(error) circuit.Outcome with classifier= instead", e.Val)
	default:
		b.errs.Add(e.Pos, "%s is not an error type or variable", e.Val)
	}
	return ErrorMatch{}, false
}

// errorType checks the type t an errors= entry names (through a pointer
// when ptr): it must implement error.
func (b *builder) errorType(e spec.Entry[string], name string, ptr bool, t types.Type) (ErrorMatch, bool) {
	if n, ok := types.Unalias(t).(*types.Named); ok && n.TypeParams() != nil && n.TypeArgs() == nil {
		b.errs.Add(e.Pos, "%s is generic: errors= needs a type that is not", e.Val)
		return ErrorMatch{}, false
	}
	if ptr {
		if types.IsInterface(t) {
			b.errs.Add(e.Pos, "%s is a pointer to an interface: write %s", e.Val, name)
			return ErrorMatch{}, false
		}
		t = types.NewPointer(t)
	}
	if !types.Implements(t, errorIface) {
		if !ptr && !types.IsInterface(t) && types.Implements(types.NewPointer(t), errorIface) {
			b.errs.Add(e.Pos, "%s does not implement error, but *%s does: write *%s", e.Val, name, name)
		} else {
			b.errs.Add(e.Pos, "%s does not implement error", e.Val)
		}
		return ErrorMatch{}, false
	}
	return ErrorMatch{Type: t}, true
}

// resolveName resolves a name an option gives at pos, Name or qual.Name,
// to its package and identifier, qual being a name the file imports or an
// import path. It reports a name that is malformed, unknown, unexported,
// or in a package the target cannot import; what describes a valid name.
func (b *builder) resolveName(text string, pos token.Position, file *ast.File, what string) (*types.Package, string, bool) {
	qual, id := "", text
	if i := strings.LastIndex(text, "."); i >= 0 {
		qual, id = text[:i], text[i+1:]
	}
	if !token.IsIdentifier(id) || strings.HasPrefix(qual, "*") {
		b.errs.Add(pos, "%q is not %s", text, what)
		return nil, "", false
	}
	pkg := b.home
	if qual != "" {
		path := b.prog.ImportedAs(qual, file)
		if path == "" {
			path = InScope(qual, b.ifacePkg)
		}
		if path != b.home.Path() {
			pkg = b.prog.Pkg(path)
		}
		switch {
		case pkg == nil:
			b.errs.Add(pos, "%q: %s", text, b.prog.Missing(path))
			return nil, "", false
		case !importable(path, b.home.Path()):
			b.errs.Add(pos, "package %s is internal: package %s cannot import it, so %s cannot be named here", path, b.home.Path(), text)
			return nil, "", false
		}
	}
	obj := pkg.Scope().Lookup(id)
	if obj == nil && qual == "" {
		if dot, dobj := b.dotImported(id, file); dobj != nil {
			pkg, obj = dot, dobj
		}
	}
	if obj == nil {
		b.errs.Add(pos, "%s is not declared in package %s", id, pkg.Path())
		return nil, "", false
	}
	if pkg != b.home && !obj.Exported() {
		b.errs.Add(pos, "%s.%s is not exported", pkg.Path(), id)
		return nil, "", false
	}
	return pkg, id, true
}

// dotImported returns the exported object named id of a package file
// dot-imports, and that package, or nils.
func (b *builder) dotImported(id string, file *ast.File) (*types.Package, types.Object) {
	if file == nil {
		return nil, nil
	}
	for _, is := range file.Imports {
		if is.Name == nil || is.Name.Name != "." {
			continue
		}
		path, _ := strconv.Unquote(is.Path.Value)
		if pkg := b.prog.Pkg(path); pkg != nil {
			if obj := pkg.Scope().Lookup(id); obj != nil && obj.Exported() {
				return pkg, obj
			}
		}
	}
	return nil, nil
}

// InScope returns the import path qual means in a manifest entry for an
// interface of package pkg (nil: none): pkg itself by its name, a package
// pkg imports by that package's name, or else qual itself, an import
// path.
func InScope(qual string, pkg *types.Package) string {
	if pkg == nil || strings.Contains(qual, "/") {
		return qual
	}
	if pkg.Name() == qual {
		return pkg.Path()
	}
	for _, imp := range pkg.Imports() {
		if imp.Name() == qual {
			return imp.Path()
		}
	}
	return qual
}

// importable reports whether package from may import path, by Go's rule
// for internal directories.
func importable(path, from string) bool {
	i := strings.LastIndex(path, "/internal/")
	switch {
	case i >= 0:
	case strings.HasSuffix(path, "/internal"):
		i = len(path) - len("/internal")
	case strings.HasPrefix(path, "internal/") || path == "internal":
		return !strings.Contains(from, ".") // the standard library's own
	default:
		return true
	}
	parent := path[:i]
	return from == parent || strings.HasPrefix(from, parent+"/")
}

// statusKind reports how a result of type t carries an HTTP status.
func statusKind(t types.Type) StatusKind {
	if hasTypeParam(t) {
		return NoStatus
	}
	if IsResponse(t) {
		return StatusField
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
