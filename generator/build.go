package generator

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/tools/go/packages"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// builder turns the specs of one target package into a Model.
type builder struct {
	l      *loaded
	errs   *ErrorList
	target *packages.Package
	home   *types.Package
	model  *Model
	// circuits are the circuits of the whole run, by name: one name has
	// one policy in every package.
	circuits map[string]*Circuit
	// generated are the package-level names the wrappers take.
	generated map[string]bool
	// typeErrsShown is set once the target's type errors are reported.
	typeErrsShown bool
}

// errorType is the universe's error.
var errorType = types.Universe.Lookup("error").Type()

// build checks the specs of target t and returns its Model; defaults are
// the manifest's, for the interfaces it lists. circuits are the run's
// circuits so far.
func build(l *loaded, t *target, defaults options, circuits map[string]*Circuit, errs *ErrorList) *Model {
	decls := map[string]bool{}
	for _, n := range t.pkg.Types.Scope().Names() {
		decls[n] = true
	}
	b := &builder{
		l: l, errs: errs, target: t.pkg, home: t.pkg.Types, circuits: circuits,
		model:     &Model{Path: t.out, PkgPath: t.pkg.PkgPath, PkgName: t.pkg.Name, Decls: decls},
		generated: map[string]bool{},
	}
	if t.manifest {
		b.checkLevel(defaults)
	}
	for _, spec := range t.specs {
		d := options{}
		if spec.Manifest {
			d = defaults
		}
		b.addInterface(spec, d)
	}
	return b.model
}

// lookup returns the target package's object named name.
func (b *builder) lookup(name string) types.Object {
	return b.home.Scope().Lookup(name)
}

// qualifier writes the packages of types in messages: none for the target
// package, the package's name for others.
func (b *builder) qualifier(p *types.Package) string {
	if p == b.home {
		return ""
	}
	return p.Name()
}

// position returns the position of a token.Pos.
func (b *builder) position(p token.Pos) token.Position { return b.l.fset.Position(p) }

// addInterface builds one guarded interface from its spec.
func (b *builder) addInterface(spec *ifaceSpec, defaults options) {
	pkg := b.home
	if spec.PkgPath != "" && spec.PkgPath != b.home.Path() {
		pkg = b.l.pkg(spec.PkgPath)
		if pkg == nil {
			b.errs.add(spec.Pos, "%s", b.l.missing(spec.PkgPath))
			return
		}
	}
	tn, ok := pkg.Scope().Lookup(spec.Name).(*types.TypeName)
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
		if spec.Manifest {
			b.errs.add(spec.Pos, "%s is not an interface type", spec.Name)
		} else {
			b.errs.add(spec.Pos, "%sguard on %s, which is not an interface type", directivePrefix, spec.Name)
		}
		return
	}
	if !iface.IsMethodSet() {
		b.errs.add(spec.Pos, "%s is a constraint interface (it holds a type set or comparable): no value has it, so nothing can be guarded", spec.Name)
		return
	}
	it := &Interface{Name: spec.Name, PkgPath: pkg.Path()}
	// The type parameters are the declared type's own: an alias of an
	// instance (type A = Store[int]) has none, a generic alias its own.
	var tparams *types.TypeParamList
	switch t := tn.Type().(type) {
	case *types.Alias:
		tparams = t.TypeParams()
	case *types.Named:
		tparams = t.TypeParams()
	}
	for i := range tparams.Len() {
		it.TypeParams = append(it.TypeParams, tparams.At(i))
	}
	bad := !b.nameWrapper(spec, it)
	methodNames := map[string]bool{}
	unimplementable := false
	for i := range iface.NumMethods() {
		fn := iface.Method(i)
		methodNames[fn.Name()] = true
		switch {
		case fn.Exported() || fn.Pkg() == b.home:
		case pkg != b.home:
			b.errs.add(spec.Pos, "interface %s.%s has unexported method %s: no type outside package %s can implement it", pkg.Path(), spec.Name, fn.Name(), fn.Pkg().Name())
			unimplementable = true
		default:
			// Embedded from another package: skip cannot help, the
			// wrapper cannot declare the method.
			b.errs.add(spec.Pos, "interface %s has unexported method %s.%s, embedded: no type outside package %s can implement it", spec.Name, fn.Pkg().Path(), fn.Name(), fn.Pkg().Name())
			unimplementable = true
		}
	}
	if unimplementable || bad && pkg != b.home {
		return
	}
	// The interface's own options are checked even when every method
	// overrides them; a method using them reports the same problems,
	// which the list drops as duplicates.
	if name, s, ok := spec.Opts.str("circuit"); ok {
		b.checkName(name, s.Pos)
	}
	b.checkLevel(spec.Opts)
	b.checkExclusive(spec.Opts)
	skips := map[string]bool{}
	for _, s := range spec.Opts.list("skip") {
		if !methodNames[s.Text] {
			b.errs.add(s.Pos, "interface %s has no method %s", spec.Name, s.Text)
		}
		skips[s.Text] = true
	}
	for _, n := range slices.Sorted(maps.Keys(spec.Methods)) {
		if !methodNames[n] {
			b.errs.add(spec.Methods[n].Pos, "interface %s has no method %s", spec.Name, n)
		}
	}
	file := spec.File
	if file == nil {
		file = b.l.fileOf(tn)
	}
	opts := spec.Opts.over(defaults)
	guarded := 0
	for i := range iface.NumMethods() {
		fn := iface.Method(i)
		ms := spec.Methods[fn.Name()]
		named := ms != nil || skips[fn.Name()]
		if ms == nil {
			ms = &methodSpec{Pos: spec.Pos, Skip: skips[fn.Name()]}
			// Point at the method itself when it is declared beside the
			// directive.
			if p := b.position(fn.Pos()); !spec.Manifest && filepath.Dir(p.Filename) == spec.Target {
				ms.Pos = p
			}
		}
		// An open circuit never refuses to release a resource: Close
		// passes through unless it is named.
		if fn.Name() == "Close" && fn.Type().(*types.Signature).Params().Len() == 0 && !named {
			ms.Skip = true
		}
		m := b.method(spec, fn, ms, opts, file)
		if m == nil {
			bad = true
			continue
		}
		it.Methods = append(it.Methods, m)
		if !m.Skip {
			guarded++
			if !slices.Contains(it.Circuits, m.Circuit) {
				it.Circuits = append(it.Circuits, m.Circuit)
			}
		}
	}
	if guarded == 0 && !bad {
		b.errs.add(spec.Pos, "every method of %s is skipped: guard one, or remove the %s", spec.Name, map[bool]string{true: "manifest entry", false: directivePrefix + "guard directive"}[spec.Manifest])
		return
	}
	if !bad {
		b.model.Interfaces = append(b.model.Interfaces, it)
	}
}

// nameWrapper sets the names of it's wrapper and constructors, and reports
// whether they are free.
func (b *builder) nameWrapper(spec *ifaceSpec, it *Interface) bool {
	it.Wrapper = "Guarded" + spec.Name
	if !token.IsExported(spec.Name) {
		it.Wrapper = "guarded" + upperFirst(spec.Name)
	}
	wpos := spec.Pos
	if w, s, ok := spec.Opts.str("wrapper"); ok {
		it.Wrapper, wpos = w, s.Pos
		if !token.IsIdentifier(w) || w == "_" {
			b.errs.add(wpos, "wrapper %q is not a Go identifier", w)
			return false
		}
		// A type named like a predeclared identifier would hide it
		// from the whole package (the generated code uses error, nil,
		// int, ...); init and main cannot name a type.
		if types.Universe.Lookup(w) != nil || w == "init" || w == "main" && b.home.Name() == "main" {
			b.errs.add(wpos, "wrapper %q is a predeclared or reserved name: choose another wrapper= name", w)
			return false
		}
	}
	it.Constructor = "new" + upperFirst(it.Wrapper)
	if token.IsExported(it.Wrapper) {
		it.Constructor = "New" + it.Wrapper
	}
	it.With = it.Constructor + "WithCircuits"
	ok := true
	for _, n := range []string{it.Wrapper, it.Constructor, it.With} {
		if o := b.lookup(n); o != nil {
			b.errs.add(wpos, "%s is already declared at %s: choose another wrapper= name", n, relPath(spec.Target, b.position(o.Pos()).String()))
			ok = false
		} else if b.generated[n] {
			b.errs.add(wpos, "%s is generated twice: choose another wrapper= name", n)
			ok = false
		}
		b.generated[n] = true
	}
	return ok
}

// method builds one method; it returns nil when the method is in error.
func (b *builder) method(spec *ifaceSpec, fn *types.Func, ms *methodSpec, opts options, file *ast.File) *Method {
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
	if ms.Skip {
		m.Skip = true
		return m
	}
	n := len(m.Results)
	switch {
	case n > 0 && types.Identical(m.Results[n-1].Type, errorType):
	case n == 1 && carriesError(m.Results[0].Type):
		if !settable(m.Results[0].Type) {
			b.errs.add(where, "method %s.%s returns %s, which has Err() error but no SetErr(error) to carry a rejection: mark it skip", spec.Name, fn.Name(), types.TypeString(m.Results[0].Type, b.qualifier))
			return nil
		}
		m.Carrier = true
	default:
		b.errs.add(where, "method %s.%s does not return error last: a guarded method must, or return one result with Err() error (mark it skip to pass it through)", spec.Name, fn.Name())
		return nil
	}
	if len(m.Params) > 0 && isContext(m.Params[0].Type) {
		m.Ctx = 0
	} else {
		m.Request = slices.IndexFunc(m.Params, func(v Var) bool { return isRequest(v.Type) })
	}
	b.checkLevel(ms.Opts)
	b.checkExclusive(ms.Opts)
	o := ms.Opts.over(opts)
	name, s, ok := o.str("circuit")
	if !ok {
		b.errs.add(where, "method %s.%s has no circuit: add %scircuit NAME, circuit= to the interface, or %sskip", spec.Name, fn.Name(), directivePrefix, directivePrefix)
		return nil
	}
	if !b.checkName(name, s.Pos) {
		return nil
	}
	p, ok := b.policy(o, where)
	if !ok {
		return nil
	}
	m.Circuit = b.circuit(name, p, where)
	m.Classify = b.classifier(spec, m, o, file, where)
	if m.Circuit == nil || m.Classify == nil {
		return nil
	}
	return m
}

// checkName reports an invalid circuit name.
func (b *builder) checkName(name string, pos token.Position) bool {
	if err := circuit.ValidateName(name); err != nil {
		b.errs.add(pos, "invalid circuit name %q: %s", name, reason(err))
		return false
	}
	return true
}

// checkExclusive reports classifier= given beside errors=, statuses= or
// codes= at one level.
func (b *builder) checkExclusive(o options) {
	c, ok := o["classifier"]
	if !ok {
		return
	}
	for _, k := range []string{"errors", "statuses", "codes"} {
		if _, ok := o[k]; ok {
			b.errs.add(c.Pos, "classifier= is exclusive with errors=, statuses= and codes=: give one or the other")
			return
		}
	}
}

// checkLevel reports the policy options of one level whose values are bad
// whatever the other levels give (cooldown=48h), so that they are reported
// even where every method overrides them, and marks them Bad so that the
// methods using them do not report them again. A value bad only beside
// others (threshold=0 without rate=, max_cooldown below cooldown) is
// reported with each method's whole policy: a policy may be split between
// levels.
func (b *builder) checkLevel(o options) {
	for _, k := range schema {
		s, set := o[k.Name]
		if !set || k.set == nil {
			continue
		}
		if ce := badAlone(k, s.Val); ce != nil {
			b.errs.add(s.Pos, "invalid %s %s: %s", k.Name, ce.Value, ce.Reason)
			s.Bad = true
			o[k.Name] = s
		}
	}
}

// badAlone returns the error of policy option k set to v, when v is bad
// both with and without the rate rule, the other fields as lax as they may
// be; nil otherwise.
func badAlone(k *key, v any) *circuit.ConfigError {
	lax := circuit.DefaultPolicy
	lax.Cooldown = circuit.MinCooldown
	withRate := lax
	withRate.FailureRate, withRate.MinCalls, withRate.Window = 1, circuit.MinMinCalls, circuit.MinWindow
	var bad *circuit.ConfigError
	for _, p := range []circuit.Policy{lax, withRate} {
		k.set(&p, v)
		ce := fieldError(validate(p), k.Field)
		if ce == nil {
			return nil
		}
		if bad == nil {
			bad = ce
		}
	}
	return bad
}

// validate is p.Validate, except that a threshold of 0 without a rate is an
// error: in a directive or manifest it means to turn the consecutive rule
// off, which needs the rate rule, not the runtime's default threshold.
func validate(p circuit.Policy) error {
	err := p.Validate()
	if p.FailureThreshold == 0 && p.FailureRate == 0 {
		err = errors.Join(&circuit.ConfigError{Field: "FailureThreshold", Value: "0", Reason: "must be within 1..1000"}, err)
	}
	return err
}

// fieldError returns the ConfigError err holds for field, or nil.
func fieldError(err error, field string) *circuit.ConfigError {
	for _, e := range unjoin(err) {
		var ce *circuit.ConfigError
		if errors.As(e, &ce) && ce.Field == field {
			return ce
		}
	}
	return nil
}

// unjoin returns the errors err joins, err itself if it joins none, or
// none for nil.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// policy applies the policy options of o to circuit.DefaultPolicy and
// checks the result, reporting each bad field at the option that set it
// (or at where, for a default).
func (b *builder) policy(o options, where token.Position) (circuit.Policy, bool) {
	p := circuit.DefaultPolicy
	ok := true
	for _, k := range schema {
		s, set := o[k.Name]
		if k.Field == "" || !set {
			continue
		}
		if k.set == nil {
			b.errs.add(s.Pos, "%s is not supported yet: circuit.Policy has no %s", k.Name, k.Field)
			ok = false
			continue
		}
		k.set(&p, s.Val)
	}
	err := validate(p)
	if err == nil {
		return p, ok
	}
	for _, e := range unjoin(err) {
		var ce *circuit.ConfigError
		if !errors.As(e, &ce) {
			b.errs.add(where, "invalid policy: %v", e)
			continue
		}
		pos, name := where, ce.Field
		if k := keyOfField(ce.Field); k != nil {
			name = k.Name
			if s, set := o[k.Name]; set {
				if s.Bad {
					continue // reported where it was given
				}
				pos = s.Pos
			}
		}
		b.errs.add(pos, "invalid %s %s: %s", name, ce.Value, ce.Reason)
	}
	return p, false
}

// circuit returns the run's circuit name with policy p, reporting a name
// given two different policies.
func (b *builder) circuit(name string, p circuit.Policy, where token.Position) *Circuit {
	c := b.circuits[name]
	if c == nil {
		c = &Circuit{Name: name, Policy: p, Pos: where}
		b.circuits[name] = c
	} else if c.Policy != p {
		here, there := differences(p, c.Policy)
		b.errs.add(where, "circuit %s is given %s here but %s at %s: one circuit name has one policy", name, here, there, c.Pos)
		return nil
	}
	if !slices.Contains(b.model.Circuits, c) {
		b.model.Circuits = append(b.model.Circuits, c)
	}
	return c
}

// differences writes the policy options in which a and b differ, as
// key=value words, a's then b's.
func differences(a, b circuit.Policy) (string, string) {
	var as, bs []string
	for _, k := range schema {
		if k.Field == "" {
			continue
		}
		va, vb := fieldValue(a, k.Field), fieldValue(b, k.Field)
		if va != vb {
			as = append(as, fmt.Sprintf("%s=%v", k.Name, va))
			bs = append(bs, fmt.Sprintf("%s=%v", k.Name, vb))
		}
	}
	return strings.Join(as, " "), strings.Join(bs, " ")
}

// fieldValue returns the value of the circuit.Policy field named field.
func fieldValue(p circuit.Policy, field string) any {
	f := reflect.ValueOf(p).FieldByName(field)
	if !f.IsValid() {
		return nil
	}
	return f.Interface()
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
			switch {
			case !ok || obj.Pkg() == nil || obj.Pkg() == b.home:
			case !obj.Exported():
				ok = false
				b.errs.add(where, "method %s uses unexported type %s.%s, which package %s cannot name", fn.Name(), obj.Pkg().Path(), obj.Name(), b.home.Name())
			case !importable(obj.Pkg().Path(), b.home.Path()):
				ok = false
				b.errs.add(where, "method %s uses type %s.%s, whose package is internal: package %s cannot import it", fn.Name(), obj.Pkg().Path(), obj.Name(), b.home.Path())
			}
		case *types.Struct:
			for i := range t.NumFields() {
				if f := t.Field(i); ok && !f.Exported() && f.Pkg() != b.home {
					ok = false
					b.errs.add(where, "method %s uses a struct type with unexported field %s of package %s, which package %s cannot write", fn.Name(), f.Name(), f.Pkg().Path(), b.home.Name())
				}
			}
		case *types.Interface:
			for i := range t.NumExplicitMethods() {
				if m := t.ExplicitMethod(i); ok && !m.Exported() && m.Pkg() != b.home {
					ok = false
					b.errs.add(where, "method %s uses an interface type with unexported method %s of package %s, which package %s cannot write", fn.Name(), m.Name(), m.Pkg().Path(), b.home.Name())
				}
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
		if e.Kind == packages.TypeError && !b.l.ours[parsePos(e.Pos).Filename] {
			b.errs.add(parsePos(e.Pos), "%s", e.Msg)
		}
	}
}

// isContext reports whether t is context.Context.
func isContext(t types.Type) bool {
	return isNamed(t, "context", "Context")
}

// isRequest reports whether t is *net/http.Request, whose Context bounds a
// method that takes no context.Context (http.RoundTripper's RoundTrip).
func isRequest(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	return ok && isNamed(p.Elem(), "net/http", "Request")
}

// isNamed reports whether t is the named type path.name.
func isNamed(t types.Type, path, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == path && n.Obj().Name() == name
}

// carriesError reports whether t has a method Err() error.
func carriesError(t types.Type) bool {
	return hasMethod(t, "Err", types.NewTuple(), types.NewTuple(types.NewParam(token.NoPos, nil, "", errorType)))
}

// settable reports whether t is a pointer to a named non-interface type
// with a method SetErr(error), so that a rejection can make one and carry
// its error.
func settable(t types.Type) bool {
	p, ok := types.Unalias(t).(*types.Pointer)
	if !ok || types.IsInterface(p.Elem()) {
		return false
	}
	if _, ok := types.Unalias(p.Elem()).(*types.Named); !ok {
		return false
	}
	return hasMethod(t, "SetErr", types.NewTuple(types.NewParam(token.NoPos, nil, "", errorType)), types.NewTuple())
}

// hasMethod reports whether t's method set has name with exactly the given
// parameters and results.
func hasMethod(t types.Type, name string, params, results *types.Tuple) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, name)
	fn, ok := obj.(*types.Func)
	if !ok {
		return false
	}
	return types.Identical(fn.Type().(*types.Signature), types.NewSignatureType(nil, nil, nil, params, results, false))
}

// reason returns a ConfigError's reason, or the error's text.
func reason(err error) string {
	var ce *circuit.ConfigError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}

// upperFirst returns s with its first letter in upper case.
func upperFirst(s string) string {
	if s == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
