package model

import (
	"go/token"
	"go/types"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/diag"
	"github.com/circuitgen/circuitgen/generator/internal/load"
	"github.com/circuitgen/circuitgen/generator/internal/spec"
)

// Run builds the files of one generator run. Its files share the run's
// circuits: one circuit name has one policy in every package.
type Run struct {
	prog     *load.Program
	errs     *diag.Collector
	circuits map[string]*Circuit
	// declared caches which packages declare types with given methods.
	declared map[string]bool
	// statusErrs caches statusErrors' finds, by target and package path.
	statusErrs map[string]statusScan
}

// NewRun returns a Run over the loaded program, recording problems in errs.
func NewRun(prog *load.Program, errs *diag.Collector) *Run {
	return &Run{prog: prog, errs: errs, circuits: map[string]*Circuit{}, declared: map[string]bool{}, statusErrs: map[string]statusScan{}}
}

// Target is one package the run writes a file for.
type Target struct {
	Pkg   *load.Package
	Specs []*spec.Interface
	// Out is the output file.
	Out string
	// Defaults are the manifest's, for the interfaces it lists.
	Defaults spec.Options
}

// builder builds the File of one target.
type builder struct {
	*Run
	target *load.Package
	home   *types.Package
	file   *File
	// generated are the package-level names the wrappers take.
	generated map[string]bool
	// typeErrsShown is set once the target's type errors are reported.
	typeErrsShown bool
	// ifacePkg is, while a manifest's interface of another package is
	// built, that package: its name, and those it imports, are in scope
	// in the entry's options.
	ifacePkg *types.Package
	// declPos are where the guarded interfaces and their methods are
	// declared: the files holding them give the output's build constraint.
	declPos []token.Pos
	// guarding are the types of the interfaces the target's specs name,
	// whose values (or instances') a Builder method returns guarded.
	guarding []types.Type
}

// Build checks the specs of t and returns the model of its file. Problems
// go to the run's collector; the File is not to be rendered when there
// are any.
func (r *Run) Build(t Target) *File {
	b := &builder{
		Run: r, target: t.Pkg, home: t.Pkg.Types,
		file:      &File{Path: t.Out, TestPath: TestFile(t.Out), PkgPath: t.Pkg.PkgPath, PkgName: t.Pkg.Name},
		generated: map[string]bool{},
	}
	b.guarding = b.guardedTypes(t.Specs)
	for _, s := range t.Specs {
		var defaults spec.Options
		if s.Manifest {
			defaults = t.Defaults
		}
		b.addInterface(s, defaults)
	}
	b.returned()
	b.file.Constraint = b.constraint()
	name(b.file, b.home)
	return b.file
}

// TestFile returns the test file beside the output out: guarded_gen.go's
// is guarded_gen_test.go.
func TestFile(out string) string { return strings.TrimSuffix(out, ".go") + "_test.go" }

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
func (b *builder) position(p token.Pos) token.Position { return b.prog.Fset.Position(p) }

// addInterface builds one guarded interface from its spec.
func (b *builder) addInterface(s *spec.Interface, defaults spec.Options) {
	tn, iface, ok := b.lookupInterface(s)
	if !ok {
		return
	}
	pkg := tn.Pkg()
	b.ifacePkg = nil
	if s.Manifest && pkg != b.home {
		b.ifacePkg = pkg
	}
	w := &Wrapper{Interface: s.Name, PkgPath: pkg.Path(), TypeParams: typeParams(tn), iface: tn.Type()}
	bad := !b.nameWrapper(s, w)
	if !b.implementable(s, iface) || bad && pkg != b.home {
		return
	}
	if send := QueueSender(slices.Collect(iface.Methods())); send != nil {
		b.errs.Add(s.Pos, "%s", QueueRefusal(s.Name, send.Name()))
		return
	}
	skips := b.skips(s, iface)
	opts := s.Opts.Over(defaults)
	file := s.File
	if file == nil {
		file = b.prog.FileOf(tn)
	}
	guarded := 0
	for i := range iface.NumMethods() {
		fn := iface.Method(i)
		m := b.method(s, fn, b.methodSpec(s, fn, skips), opts, file)
		if m == nil {
			bad = true
			continue
		}
		w.Methods = append(w.Methods, m)
		if !m.Skip {
			guarded++
		}
	}
	if bad {
		return
	}
	if guarded == 0 {
		what := spec.DirectivePrefix + "guard directive"
		if s.Manifest {
			what = "manifest entry"
		}
		if len(w.Methods) == 0 {
			b.errs.Add(s.Pos, "%s has no method to guard: remove the %s", s.Name, what)
		} else {
			b.errs.Add(s.Pos, "every method of %s is skipped: guard one, or remove the %s", s.Name, what)
		}
		return
	}
	b.file.Wrappers = append(b.file.Wrappers, w)
	b.declPos = append(b.declPos, tn.Pos())
	for i := range iface.NumMethods() {
		b.declPos = append(b.declPos, iface.Method(i).Pos())
	}
}

// returned finds the results of guarded methods, before their error,
// whose interface a wrapper of the file guards, or an instance of it: they
// come back guarded, unless guard_returned=false.
func (b *builder) returned() {
	for _, w := range b.file.Wrappers {
		for _, m := range w.Methods {
			if m.Shape == Builder {
				if w2 := b.wrapperOf(m.Results[0].Type); w2 != nil {
					m.Returns = []Returned{{Result: 0, Wrapper: w2}}
				}
				continue
			}
			if m.Skip || m.Shape != ErrorLast || !m.guardReturned {
				continue
			}
			for i, r := range m.Results[:len(m.Results)-1] {
				if w2 := b.wrapperOf(r.Type); w2 != nil {
					m.Returns = append(m.Returns, Returned{Result: i, Wrapper: w2})
				}
			}
		}
	}
}

// wrapperOf returns the file's wrapper of the interface t: the one of t
// itself (an alias of an instance is its own interface), else of the
// generic interface t is an instance of; nil when there is none.
func (b *builder) wrapperOf(t types.Type) *Wrapper {
	var generic *Wrapper
	for _, w := range b.file.Wrappers {
		switch {
		case types.Identical(t, w.iface):
			return w
		case generic == nil && instanceOf(t, w.iface):
			generic = w
		}
	}
	return generic
}

// guardedTypes returns the types of the non-generic interfaces specs
// name, without reporting the names it cannot find: addInterface does.
func (b *builder) guardedTypes(specs []*spec.Interface) []types.Type {
	var ts []types.Type
	for _, s := range specs {
		pkg := b.home
		if s.PkgPath != "" && s.PkgPath != b.home.Path() {
			pkg = b.prog.Pkg(s.PkgPath)
		}
		if pkg == nil {
			continue
		}
		tn, ok := pkg.Scope().Lookup(s.Name).(*types.TypeName)
		if ok && types.IsInterface(tn.Type()) {
			ts = append(ts, tn.Type())
		}
	}
	return ts
}

// guards reports whether t is an interface the run's specs name, or an
// instance of one.
func (b *builder) guards(t types.Type) bool {
	return slices.ContainsFunc(b.guarding, func(g types.Type) bool { return instanceOf(t, g) })
}

// instanceOf reports whether t is the interface type g, or an instance of
// g when g is generic.
func instanceOf(t, g types.Type) bool {
	n, ok := t.(*types.Named)
	return types.Identical(t, g) || ok && n.TypeArgs().Len() > 0 && types.Identical(n.Origin(), g)
}

// lookupInterface finds the interface s names and checks that it can be
// guarded.
func (b *builder) lookupInterface(s *spec.Interface) (*types.TypeName, *types.Interface, bool) {
	pkg := b.home
	if s.PkgPath != "" && s.PkgPath != b.home.Path() {
		if pkg = b.prog.Pkg(s.PkgPath); pkg == nil {
			b.errs.Add(s.Pos, "%s", b.prog.Missing(s.PkgPath))
			return nil, nil, false
		}
	}
	tn, ok := pkg.Scope().Lookup(s.Name).(*types.TypeName)
	switch {
	case !ok:
		b.errs.Add(s.Pos, "no type %s in package %s", s.Name, pkg.Path())
		return nil, nil, false
	case pkg != b.home && !tn.Exported():
		b.errs.Add(s.Pos, "%s.%s is not exported", pkg.Path(), s.Name)
		return nil, nil, false
	}
	iface, ok := tn.Type().Underlying().(*types.Interface)
	switch {
	case !ok && s.Manifest:
		b.errs.Add(s.Pos, "%s is not an interface type: for a struct client, circuitgen init -source %s.%s writes an interface of its methods, with the assertion that *%s implements it, to guard instead", s.Name, pkg.Path(), s.Name, s.Name)
	case !ok:
		b.errs.Add(s.Pos, "%sguard on %s, which is not an interface type: declare an interface of the methods you call (circuitgen init -source %s.%s writes one), and guard it", spec.DirectivePrefix, s.Name, pkg.Path(), s.Name)
	case !iface.IsMethodSet():
		b.errs.Add(s.Pos, "%s is a constraint interface (it holds a type set or comparable): no value has it, so nothing can be guarded", s.Name)
	default:
		return tn, iface, true
	}
	return nil, nil, false
}

// typeParams returns the type parameters of the declared type itself: an
// alias of an instance (type A = Store[int]) has none, a generic alias its
// own.
func typeParams(tn *types.TypeName) []*types.TypeParam {
	var list *types.TypeParamList
	switch t := tn.Type().(type) {
	case *types.Alias:
		list = t.TypeParams()
	case *types.Named:
		list = t.TypeParams()
	}
	var tps []*types.TypeParam
	for i := range list.Len() {
		tps = append(tps, list.At(i))
	}
	return tps
}

// implementable reports whether a type of the target package can implement
// iface: it has no unexported method of another package.
func (b *builder) implementable(s *spec.Interface, iface *types.Interface) bool {
	ok := true
	for i := range iface.NumMethods() {
		fn := iface.Method(i)
		switch {
		case fn.Exported() || fn.Pkg() == b.home:
		case s.PkgPath != "" && s.PkgPath != b.home.Path():
			b.errs.Add(s.Pos, "interface %s.%s has unexported method %s: no type outside package %s can implement it", s.PkgPath, s.Name, fn.Name(), fn.Pkg().Name())
			ok = false
		default:
			// Embedded from another package: skip cannot help, the
			// wrapper cannot declare the method.
			b.errs.Add(s.Pos, "interface %s has unexported method %s.%s, embedded: no type outside package %s can implement it", s.Name, fn.Pkg().Path(), fn.Name(), fn.Pkg().Name())
			ok = false
		}
	}
	return ok
}

// skips returns the methods the interface's skip= names, reporting the
// method names of skip= and of the method specs that iface lacks.
func (b *builder) skips(s *spec.Interface, iface *types.Interface) map[string]bool {
	methods := map[string]bool{}
	for i := range iface.NumMethods() {
		methods[iface.Method(i).Name()] = true
	}
	has := func(name string) bool { return methods[name] }
	skips := map[string]bool{}
	for _, e := range s.Opts.Skip.Entries {
		if !has(e.Val) {
			b.errs.Add(e.Pos, "interface %s has no method %s", s.Name, e.Val)
		}
		skips[e.Val] = true
	}
	for _, n := range slices.Sorted(maps.Keys(s.Methods)) {
		if !has(n) {
			b.errs.Add(s.Methods[n].Pos, "interface %s has no method %s", s.Name, n)
		}
	}
	return skips
}

// methodSpec returns what the spec says of method fn: its own entry, or
// one made from skip= and the Close rule.
func (b *builder) methodSpec(s *spec.Interface, fn *types.Func, skips map[string]bool) *spec.Method {
	if ms := s.Methods[fn.Name()]; ms != nil {
		return ms
	}
	ms := &spec.Method{Pos: s.Pos, Skip: skips[fn.Name()]}
	// Point at the method itself when it is declared beside the directive.
	if p := b.position(fn.Pos()); !s.Manifest && filepath.Dir(p.Filename) == s.Target {
		ms.Pos = p
	}
	// An open circuit never refuses to release a resource: Close passes
	// through unless it is named.
	if fn.Name() == "Close" && fn.Type().(*types.Signature).Params().Len() == 0 {
		ms.Skip = true
	}
	// A stream that cannot fail (iter.Seq[T]) has nothing to guard.
	if PassesThrough(fn.Type().(*types.Signature)) {
		ms.Skip = true
	}
	return ms
}
