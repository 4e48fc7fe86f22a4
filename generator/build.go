package generator

import (
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"sort"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/tools/go/packages"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// Policy defaults when neither a directive nor a manifest gives a value.
const (
	DefaultThreshold = 5
	DefaultCooldown  = 30 * time.Second
	DefaultLease     = 10 * time.Second
)

// builder turns the specs of one target package into a Model.
type builder struct {
	l      *loaded
	errs   *ErrorList
	target *packages.Package
	home   *types.Package
	model  *Model
	// typeErrsShown is set once the target's type errors are reported.
	typeErrsShown bool
	// decls are the package-level names the output file declares.
	decls map[string]bool
	// classifiers are the distinct classifiers made so far.
	classifiers []*Classifier
}

// errorType is the universe's error.
var errorType = types.Universe.Lookup("error").Type()

// newBuilder starts the model of the output file at path for target.
func newBuilder(l *loaded, errs *ErrorList, target *packages.Package, path string) *builder {
	// The package's own names are taken too, so that the file's imports
	// and locals are chosen around them (see prepare).
	decls := map[string]bool{}
	for _, n := range target.Types.Scope().Names() {
		if !l.inOurs(target.Types.Scope().Lookup(n).Pos()) {
			decls[n] = true
		}
	}
	return &builder{
		l: l, errs: errs, target: target, home: target.Types,
		model: &Model{Path: path, PkgPath: target.PkgPath, PkgName: target.Name, Decls: decls},
		decls: decls,
	}
}

// declare reserves a package-level name, made unique against the package
// and the file's own declarations.
func (b *builder) declare(base string) string {
	name := base
	for i := 2; b.decls[name] || b.lookup(name) != nil; i++ {
		name = base + itoa(i)
	}
	b.decls[name] = true
	return name
}

// lookup returns the target package's object named name, leaving out
// the declarations of a previous output of ours.
func (b *builder) lookup(name string) types.Object {
	if o := b.home.Scope().Lookup(name); o != nil && !b.l.inOurs(o.Pos()) {
		return o
	}
	return nil
}

// position returns the position of a token.Pos.
func (b *builder) position(p token.Pos) token.Position { return b.l.fset.Position(p) }

// addInterface builds one guarded interface from its spec.
func (b *builder) addInterface(spec *ifaceSpec, defaults options) {
	pkg := b.home
	if spec.PkgPath != "" && spec.PkgPath != b.home.Path() {
		pkg = b.l.byPath[spec.PkgPath]
		if pkg == nil || !pkg.Complete() && pkg.Scope().Len() == 0 {
			b.errs.add(spec.Pos, "cannot load package %q%s", spec.PkgPath, b.l.loadError(spec.PkgPath))
			return
		}
	}
	obj := pkg.Scope().Lookup(spec.Name)
	tn, ok := obj.(*types.TypeName)
	if !ok {
		b.errs.add(spec.Pos, "no type %s in package %s", spec.Name, pkg.Path())
		return
	}
	if pkg != b.home && !tn.Exported() {
		b.errs.add(spec.Pos, "%s.%s is not exported", pkg.Path(), spec.Name)
		return
	}
	iface, ok := tn.Type().Underlying().(*types.Interface)
	if !ok {
		b.errs.add(spec.Pos, "%s is not an interface type", spec.Name)
		return
	}
	file := spec.File
	if file == nil {
		file = b.l.fileOf(tn)
	}
	it := &Interface{Name: spec.Name, PkgPath: pkg.Path()}
	if named, ok := types.Unalias(tn.Type()).(*types.Named); ok && named.TypeParams() != nil {
		for i := range named.TypeParams().Len() {
			it.TypeParams = append(it.TypeParams, named.TypeParams().At(i))
		}
	}
	it.Wrapper = "Guarded" + spec.Name
	wpos := spec.Pos
	if spec.Wrapper.Set {
		it.Wrapper, wpos = spec.Wrapper.Val, spec.Wrapper.Pos
		if !token.IsIdentifier(it.Wrapper) || it.Wrapper == "_" {
			b.errs.add(wpos, "wrapper %q is not a Go identifier", it.Wrapper)
			return
		}
		// A type named like a predeclared identifier would hide it
		// from the whole package (the generated code uses error, nil,
		// int, ...); init and main cannot name a type.
		if types.Universe.Lookup(it.Wrapper) != nil || it.Wrapper == "init" || it.Wrapper == "main" && b.home.Name() == "main" {
			b.errs.add(wpos, "wrapper %q is a predeclared or reserved name: choose another wrapper= name", it.Wrapper)
			return
		}
	}
	it.Constructor = "new" + upperFirst(it.Wrapper)
	if token.IsExported(it.Wrapper) {
		it.Constructor = "New" + it.Wrapper
	}
	bad := false
	for _, n := range []string{it.Wrapper, it.Constructor} {
		if o := b.lookup(n); o != nil {
			b.errs.add(wpos, "%s is already declared at %s: choose another wrapper= name", n, relPath(spec.Target, b.position(o.Pos()).String()))
			bad = true
		} else if b.decls[n] {
			b.errs.add(wpos, "%s is generated twice: choose another wrapper= name", n)
			bad = true
		}
		b.decls[n] = true
	}
	methodNames := map[string]bool{}
	for i := range iface.NumMethods() {
		fn := iface.Method(i)
		methodNames[fn.Name()] = true
		if !fn.Exported() && pkg != b.home {
			b.errs.add(spec.Pos, "interface %s.%s has unexported method %s: no type outside package %s can implement it", pkg.Path(), spec.Name, fn.Name(), pkg.Name())
			bad = true
		}
	}
	if bad && pkg != b.home {
		return
	}
	it.Next, it.Circuits = freeName("next", methodNames), freeName("circuits", methodNames)
	opts := spec.Opts.over(defaults)
	// The interface's circuit is checked even when every method is
	// skipped or names its own; a method using it reports the same
	// problem, which the list drops as a duplicate.
	if c := spec.Opts.Circuit; c.Set {
		if err := circuit.ValidateName(c.Val); err != nil {
			b.errs.add(c.Pos, "invalid circuit name %q: %s", c.Val, reason(err))
		}
	}
	for i := range iface.NumMethods() {
		fn := iface.Method(i)
		ms := spec.Methods[fn.Name()]
		if ms == nil {
			ms = &methodSpec{Pos: spec.Pos}
			// Point at the method itself when it is declared beside the
			// directive.
			if p := b.position(fn.Pos()); !spec.Manifest && filepath.Dir(p.Filename) == spec.Target {
				ms.Pos = p
			}
		} else {
			ms.used = true
		}
		if m := b.method(spec, it, fn, ms, opts, file); m != nil {
			it.Methods = append(it.Methods, m)
		}
	}
	names := make([]string, 0, len(spec.Methods))
	for n := range spec.Methods {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if ms := spec.Methods[n]; !ms.used {
			b.errs.add(ms.Pos, "interface %s has no method %s", spec.Name, n)
		}
	}
	if !bad {
		b.model.Interfaces = append(b.model.Interfaces, it)
	}
}

// method builds one method of it.
func (b *builder) method(spec *ifaceSpec, it *Interface, fn *types.Func, ms *methodSpec, opts options, file *ast.File) *Method {
	sig := fn.Type().(*types.Signature)
	m := &Method{Name: fn.Name(), Variadic: sig.Variadic(), Ctx: -1, Request: -1}
	where := ms.Pos
	ok := true
	for i := range sig.Params().Len() {
		v := sig.Params().At(i)
		m.Params = append(m.Params, Var{Name: v.Name(), Type: v.Type()})
		ok = b.checkType(where, fn, v.Type()) && ok
	}
	for i := range sig.Results().Len() {
		v := sig.Results().At(i)
		m.Results = append(m.Results, Var{Name: v.Name(), Type: v.Type()})
		ok = b.checkType(where, fn, v.Type()) && ok
	}
	if !ok {
		return nil
	}
	if ms.Skip.Set && ms.Skip.Val {
		m.Skip = true
		return m
	}
	n := len(m.Results)
	if n == 0 || !types.Identical(m.Results[n-1].Type, errorType) {
		b.errs.add(where, "method %s.%s does not return error last: a guarded method must (mark it %sskip to pass it through)", spec.Name, fn.Name(), directivePrefix)
		return nil
	}
	if len(m.Params) > 0 && isContext(m.Params[0].Type) {
		m.Ctx = 0
	} else {
		m.Request = slices.IndexFunc(m.Params, func(v Var) bool { return isRequest(v.Type) })
	}
	o := ms.Opts.over(opts)
	if !o.Circuit.Set {
		b.errs.add(where, "method %s.%s has no circuit: add %scircuit NAME, circuit= to the interface, or %sskip", spec.Name, fn.Name(), directivePrefix, directivePrefix)
		return nil
	}
	m.Circuit = o.Circuit.Val
	if err := circuit.ValidateName(m.Circuit); err != nil {
		b.errs.add(o.Circuit.Pos, "invalid circuit name %q: %s", m.Circuit, reason(err))
		return nil
	}
	m.Policy = b.policy(m.Circuit, o, where)
	m.Classify = b.classifier(spec, it, m, o, file, where)
	if m.Policy == nil || m.Classify == nil {
		return nil
	}
	return m
}

// policy returns the package-level policy value for circuit, sharing one
// value among identical policies of the same circuit.
func (b *builder) policy(name string, o options, where token.Position) *PolicyVar {
	p := circuit.Policy{FailureThreshold: DefaultThreshold, Cooldown: DefaultCooldown, ProbeLease: DefaultLease}
	if o.Threshold.Set {
		p.FailureThreshold = o.Threshold.Val
	}
	if o.Cooldown.Set {
		p.Cooldown = o.Cooldown.Val
	}
	if o.Lease.Set {
		p.ProbeLease = o.Lease.Val
	}
	// Each field is checked alone, against defaults for the others, so
	// that every bad value is reported at its own key.
	def := circuit.Policy{FailureThreshold: DefaultThreshold, Cooldown: DefaultCooldown, ProbeLease: DefaultLease}
	checks := []struct {
		key string
		set bool
		pos token.Position
		val string
		p   circuit.Policy
	}{
		{"threshold", o.Threshold.Set, o.Threshold.Pos, itoa(p.FailureThreshold), circuit.Policy{FailureThreshold: p.FailureThreshold, Cooldown: def.Cooldown, ProbeLease: def.ProbeLease}},
		{"cooldown", o.Cooldown.Set, o.Cooldown.Pos, p.Cooldown.String(), circuit.Policy{FailureThreshold: def.FailureThreshold, Cooldown: p.Cooldown, ProbeLease: def.ProbeLease}},
		{"lease", o.Lease.Set, o.Lease.Pos, p.ProbeLease.String(), circuit.Policy{FailureThreshold: def.FailureThreshold, Cooldown: def.Cooldown, ProbeLease: p.ProbeLease}},
	}
	bad := false
	for _, c := range checks {
		if err := c.p.Validate(); err != nil {
			b.errs.add(pick(c.pos, where, c.set), "invalid %s %s: %s", c.key, c.val, reason(err))
			bad = true
		}
	}
	if bad {
		return nil
	}
	for _, pv := range b.model.Policies {
		if pv.Circuit == name && pv.Threshold == p.FailureThreshold && pv.Cooldown == p.Cooldown && pv.Lease == p.ProbeLease {
			return pv
		}
	}
	pv := &PolicyVar{Name: b.declare("policy" + camel(name)), Circuit: name, Threshold: p.FailureThreshold, Cooldown: p.Cooldown, Lease: p.ProbeLease}
	b.model.Policies = append(b.model.Policies, pv)
	return pv
}

// checkType reports types a method's signature uses that the output
// package cannot name, and invalid types left by type errors.
func (b *builder) checkType(where token.Position, fn *types.Func, t types.Type) bool {
	ok := true
	walkType(t, func(t types.Type) {
		switch t := t.(type) {
		case *types.Basic:
			if t.Kind() == types.Invalid && ok {
				ok = false
				b.errs.add(where, "method %s does not type-check", fn.Name())
				b.typeErrors()
			}
		case *types.Named, *types.Alias:
			obj := t.(interface{ Obj() *types.TypeName }).Obj()
			if obj.Pkg() != nil && obj.Pkg() != b.home && !obj.Exported() && ok {
				ok = false
				b.errs.add(where, "method %s uses unexported type %s.%s, which package %s cannot name", fn.Name(), obj.Pkg().Path(), obj.Name(), b.home.Name())
			}
		}
	})
	return ok
}

// typeErrors reports the target package's type errors once.
func (b *builder) typeErrors() {
	if b.typeErrsShown {
		return
	}
	b.typeErrsShown = true
	for _, e := range b.target.Errors {
		if e.Kind == packages.TypeError {
			b.errs.add(parsePos(e.Pos), "%s", e.Msg)
		}
	}
}

// isContext reports whether t is context.Context.
func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

// isRequest reports whether t is *net/http.Request, whose Context bounds a
// method that takes no context.Context (http.RoundTripper's RoundTrip).
func isRequest(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "net/http" && n.Obj().Name() == "Request"
}

// reason returns a ConfigError's reason, or the error's text.
func reason(err error) string {
	if ce, ok := err.(*circuit.ConfigError); ok {
		return ce.Reason
	}
	return err.Error()
}

// pick returns p when set, else def.
func pick(p, def token.Position, set bool) token.Position {
	if set {
		return p
	}
	return def
}

// freeName returns base, or base with underscores appended, not in taken.
func freeName(base string, taken map[string]bool) string {
	for taken[base] {
		base += "_"
	}
	return base
}

// upperFirst returns s with its first letter in upper case.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
