package generator

import (
	"bytes"
	"fmt"
	"go/types"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"
)

// circuitPath is the import path of the runtime package generated code uses.
const circuitPath = "github.com/circuitgen/circuitgen/runtime/circuit"

// render renders the model as a gofmt'd Go file.
func render(m *Model) ([]byte, error) {
	prepare(m)
	f := jen.NewFilePathName(m.PkgPath, m.PkgName)
	f.HeaderComment(Header)
	for path, name := range m.Imports {
		if m.Aliased[path] {
			f.ImportAlias(path, name)
		} else {
			f.ImportName(path, name)
		}
	}
	if len(m.Policies) > 0 {
		f.Var().DefsFunc(func(g *jen.Group) {
			for _, p := range m.Policies {
				g.Id(p.Name).Op("=").Qual(circuitPath, "Policy").Values(
					jen.Id("FailureThreshold").Op(":").Lit(p.Threshold),
					jen.Id("Cooldown").Op(":").Add(duration(p.Cooldown)),
					jen.Id("ProbeLease").Op(":").Add(duration(p.Lease)),
				)
			}
		})
	}
	rendered := map[*Classifier]bool{}
	for _, it := range m.Interfaces {
		renderInterface(f, m, it, rendered)
	}
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", m.Path, err)
	}
	return buf.Bytes(), nil
}

// prepare fills in the model's imports and every local name, so that no
// local hides a package, a type parameter or a package-level name.
func prepare(m *Model) {
	m.Imports = map[string]string{circuitPath: "circuit", "context": "context", "errors": "errors", "time": "time"}
	for _, it := range m.Interfaces {
		for _, tp := range it.TypeParams {
			packagesOf(tp.Constraint(), m.Imports)
		}
		for _, mt := range it.Methods {
			for _, v := range append(append([]Var{}, mt.Params...), mt.Results...) {
				packagesOf(v.Type, m.Imports)
			}
			if mt.Classify != nil {
				for _, e := range mt.Classify.Errors {
					if e.Is {
						m.Imports[e.PkgPath] = e.PkgName
					} else {
						packagesOf(e.Type, m.Imports)
					}
				}
			}
		}
	}
	delete(m.Imports, m.PkgPath)
	// Packages that share a name get numbered aliases, in path order, so
	// that every name in the file is known before locals are named.
	paths := make([]string, 0, len(m.Imports))
	for path := range m.Imports {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	m.Aliased = map[string]bool{}
	pkgs := map[string]bool{}
	for _, path := range paths {
		name := m.Imports[path]
		alias := name
		for i := 2; pkgs[alias] || m.Decls[alias]; i++ {
			alias = name + strconv.Itoa(i)
		}
		if alias != name {
			m.Imports[path], m.Aliased[path] = alias, true
		}
		pkgs[alias] = true
	}
	for _, it := range m.Interfaces {
		for _, mt := range it.Methods {
			n := &namer{taken: map[string]bool{}, pkgs: pkgs, decls: m.Decls}
			for _, tp := range it.TypeParams {
				n.taken[tp.Obj().Name()] = true
			}
			for _, p := range m.Policies {
				n.taken[p.Name] = true
			}
			if mt.Classify != nil {
				n.taken[mt.Classify.Name] = true
			}
			n.taken[it.Wrapper] = true
			for i := range mt.Params {
				base := mt.Params[i].Name
				if base == "" || base == "_" {
					base = "p" + strconv.Itoa(i)
				}
				mt.Params[i].Name = n.name(base)
			}
			mt.Recv = n.name("g")
			mt.Err = n.name("err")
			if mt.Ctx < 0 && mt.Request >= 0 {
				mt.Ran = n.name("ran")
			}
			mt.ResultNames = nil
			for i := range len(mt.Results) - 1 {
				mt.ResultNames = append(mt.ResultNames, n.name("r"+strconv.Itoa(i)))
			}
		}
	}
}

// renderInterface renders the wrapper of one interface.
func renderInterface(f *jen.File, m *Model, it *Interface, rendered map[*Classifier]bool) {
	tparams := make([]jen.Code, len(it.TypeParams))
	targs := make([]jen.Code, len(it.TypeParams))
	for i, tp := range it.TypeParams {
		tparams[i] = jen.Id(tp.Obj().Name()).Add(constraint(tp.Constraint()))
		targs[i] = jen.Id(tp.Obj().Name())
	}
	iface := func() *jen.Statement { return jen.Qual(it.PkgPath, it.Name).Types(targs...) }
	wrapper := func() *jen.Statement { return jen.Id(it.Wrapper).Types(targs...) }

	slots, bound := circuitSlots(it)
	f.Line()
	f.Commentf("%s is a %s that runs every call of a guarded method through a circuit breaker.", it.Wrapper, it.Name)
	f.Type().Id(it.Wrapper).Types(tparams...).Struct(
		jen.Id(it.Next).Add(iface()),
		jen.Id(it.Circuits).Index(jen.Lit(len(bound))).Op("*").Qual(circuitPath, "Circuit"),
	)
	n := &namer{taken: map[string]bool{}, pkgs: map[string]bool{}}
	for _, tp := range it.TypeParams {
		n.taken[tp.Obj().Name()] = true
	}
	next, b := n.name("next"), n.name("b")
	f.Line()
	f.Commentf("%s returns a %s that calls next through the circuits of b.", it.Constructor, it.Wrapper)
	f.Func().Id(it.Constructor).Types(tparams...).Params(jen.Id(next).Add(iface()), jen.Id(b).Op("*").Qual(circuitPath, "Breaker")).Op("*").Add(wrapper()).Block(
		jen.Return(jen.Op("&").Add(wrapper()).Values(
			jen.Id(it.Next).Op(":").Id(next),
			jen.Id(it.Circuits).Op(":").Index(jen.Lit(len(bound))).Op("*").Qual(circuitPath, "Circuit").Custom(
				jen.Options{Open: "{", Close: "}", Separator: ",", Multi: len(bound) > 0},
				bindings(b, bound)...,
			),
		)),
	)
	f.Line()
	if len(it.TypeParams) == 0 {
		f.Var().Id("_").Qual(it.PkgPath, it.Name).Op("=").Parens(jen.Op("*").Id(it.Wrapper)).Parens(jen.Nil())
	} else {
		f.Comment("The wrapper implements " + it.Name + " for every instantiation.")
		f.Func().Id("_").Types(tparams...).Params().Block(
			jen.Var().Id("_").Add(iface()).Op("=").Parens(jen.Op("*").Add(wrapper())).Parens(jen.Nil()),
		)
	}
	for _, mt := range it.Methods {
		f.Line()
		if mt.Skip {
			f.Commentf("%s calls next.%s directly: it is not guarded.", mt.Name, mt.Name)
		} else {
			f.Commentf("%s calls next.%s through circuit %s.", mt.Name, mt.Name, mt.Circuit)
		}
		renderMethod(f, it, mt, slots[mt], wrapper())
		if c := mt.Classify; c != nil && !rendered[c] {
			rendered[c] = true
			renderClassifier(f, m, c)
		}
	}
}

// constraint renders a type parameter's constraint, unwrapping the
// implicit interface of a constraint such as ~int | ~string.
func constraint(t types.Type) jen.Code {
	if it, ok := t.(*types.Interface); ok && it.IsImplicit() && it.NumEmbeddeds() == 1 {
		return typeCode(it.EmbeddedType(0))
	}
	return typeCode(t)
}

// boundCircuit is one circuit of a wrapper: a name under a policy, bound
// once by the constructor.
type boundCircuit struct {
	name   string
	policy *PolicyVar
}

// circuitSlots numbers the distinct circuits of it's guarded methods, in
// method order, and returns each method's number.
func circuitSlots(it *Interface) (map[*Method]int, []boundCircuit) {
	slots := map[*Method]int{}
	var bound []boundCircuit
	for _, mt := range it.Methods {
		if mt.Skip {
			continue
		}
		c := boundCircuit{mt.Circuit, mt.Policy}
		i := slices.Index(bound, c)
		if i < 0 {
			i = len(bound)
			bound = append(bound, c)
		}
		slots[mt] = i
	}
	return slots, bound
}

// bindings renders b.Circuit(name, policy) for each bound circuit.
func bindings(b string, bound []boundCircuit) []jen.Code {
	code := make([]jen.Code, len(bound))
	for i, c := range bound {
		code[i] = jen.Id(b).Dot("Circuit").Call(jen.Lit(c.name), jen.Id(c.policy.Name))
	}
	return code
}

// renderMethod renders one method of the wrapper; slot numbers its circuit.
func renderMethod(f *jen.File, it *Interface, mt *Method, slot int, wrapper *jen.Statement) {
	params := make([]jen.Code, len(mt.Params))
	args := make([]jen.Code, len(mt.Params))
	for i, p := range mt.Params {
		if mt.Variadic && i == len(mt.Params)-1 {
			params[i] = jen.Id(p.Name).Op("...").Add(typeCode(p.Type.(*types.Slice).Elem()))
			args[i] = jen.Id(p.Name).Op("...")
		} else {
			params[i] = jen.Id(p.Name).Add(typeCode(p.Type))
			args[i] = jen.Id(p.Name)
		}
	}
	results := make([]jen.Code, len(mt.Results))
	for i, r := range mt.Results {
		results[i] = typeCode(r.Type)
	}
	recv := mt.Recv
	if recv == "" {
		recv = "g"
	}
	call := jen.Id(recv).Dot(it.Next).Dot(mt.Name).Call(args...)
	decl := f.Func().Params(jen.Id(recv).Op("*").Add(wrapper)).Id(mt.Name).Params(params...)
	switch len(results) {
	case 0:
	case 1:
		decl.Add(results[0])
	default:
		decl.Params(results...)
	}
	if mt.Skip {
		if len(results) == 0 {
			decl.Block(call)
		} else {
			decl.Block(jen.Return(call))
		}
		return
	}
	ctx := jen.Qual("context", "Background").Call()
	opParam := jen.Qual("context", "Context")
	switch {
	case mt.Ctx >= 0:
		name := mt.Params[mt.Ctx].Name
		ctx = jen.Id(name)
		opParam = jen.Id(name).Qual("context", "Context")
	case mt.Request >= 0:
		ctx = jen.Id(mt.Params[mt.Request].Name).Dot("Context").Call()
	}
	classifyArgs := []jen.Code{jen.Id(mt.Err)}
	if c := mt.Classify; c.Result >= 0 {
		classifyArgs = []jen.Code{jen.Id(mt.ResultNames[c.Result]), jen.Id(mt.Err)}
	}
	op := func(body ...jen.Code) *jen.Statement {
		return jen.Func().Params(opParam).Params(jen.Qual(circuitPath, "Outcome"), jen.Error()).Block(body...)
	}
	run := func(body ...jen.Code) *jen.Statement {
		return jen.Id(recv).Dot(it.Circuits).Index(jen.Lit(slot)).Dot("Run").Call(ctx, op(body...))
	}
	ret := jen.Return(jen.Id(mt.Classify.Name).Call(classifyArgs...), jen.Id(mt.Err))
	if len(mt.ResultNames) == 0 && mt.Ran == "" {
		decl.Block(jen.Return(run(jen.Id(mt.Err).Op(":=").Add(call), ret)))
		return
	}
	var body, inner []jen.Code
	lhs := make([]jen.Code, 0, len(mt.Results))
	out := make([]jen.Code, 0, len(mt.Results))
	for i, name := range mt.ResultNames {
		body = append(body, jen.Var().Id(name).Add(typeCode(mt.Results[i].Type)))
		lhs = append(lhs, jen.Id(name))
		out = append(out, jen.Id(name))
	}
	lhs = append(lhs, jen.Id(mt.Err))
	out = append(out, jen.Id(mt.Err))
	if mt.Ran != "" {
		body = append(body, jen.Var().Id(mt.Ran).Bool())
		inner = append(inner, jen.Id(mt.Ran).Op("=").True())
	}
	inner = append(inner, jen.Var().Id(mt.Err).Error(), jen.List(lhs...).Op("=").Add(call), ret)
	body = append(body, jen.Id(mt.Err).Op(":=").Add(run(inner...)))
	if mt.Ran != "" {
		// Like http.RoundTripper and http.Client.Do, close the request's
		// body even when the call was rejected and next never saw it.
		req := jen.Id(mt.Params[mt.Request].Name).Dot("Body")
		body = append(body, jen.If(jen.Op("!").Id(mt.Ran).Op("&&").Add(req.Clone()).Op("!=").Nil()).Block(
			jen.Id("_").Op("=").Add(req.Clone()).Dot("Close").Call(),
		))
	}
	body = append(body, jen.Return(out...))
	decl.Block(body...)
}

// renderClassifier renders the classifier of one method.
func renderClassifier(f *jen.File, m *Model, c *Classifier) {
	pkgs := map[string]bool{}
	for _, name := range m.Imports {
		pkgs[name] = true
	}
	n := &namer{taken: map[string]bool{}, pkgs: pkgs, decls: m.Decls}
	errName := n.name("err")
	params := []jen.Code{jen.Id(errName).Error()}
	var resName string
	if c.Result >= 0 {
		resName = n.name("result")
		params = []jen.Code{jen.Id(resName).Add(typeCode(c.ResultType)), jen.Id(errName).Error()}
	}
	failure := jen.Return(jen.Qual(circuitPath, "Failure"))
	var onErr []jen.Code
	for _, e := range c.Errors {
		if e.Is {
			onErr = append(onErr, jen.If(jen.Qual("errors", "Is").Call(jen.Id(errName), jen.Qual(e.PkgPath, e.Name))).Block(failure.Clone()))
			continue
		}
		v := n.name("target")
		onErr = append(onErr,
			jen.Var().Id(v).Add(typeCode(e.Type)),
			jen.If(jen.Qual("errors", "As").Call(jen.Id(errName), jen.Op("&").Id(v))).Block(failure.Clone()),
		)
	}
	var code, ok string
	if len(c.Statuses) > 0 {
		code, ok = n.name("code"), n.name("ok")
		onErr = append(onErr, jen.If(
			jen.List(jen.Id(code), jen.Id(ok)).Op(":=").Qual(circuitPath, "ErrorStatus").Call(jen.Id(errName)),
			jen.Id(ok).Op("&&").Add(statusCond(code, c.Statuses, true)),
		).Block(failure.Clone()))
	}
	onErr = append(onErr, jen.Return(jen.Qual(circuitPath, "Ignored")))
	body := []jen.Code{jen.If(jen.Id(errName).Op("!=").Nil()).Block(onErr...)}
	if c.Result >= 0 {
		read := jen.Id(resName).Dot("StatusCode")
		if c.ResultKind == StatusMethod {
			read.Call()
		}
		check := jen.If(jen.Id(code).Op(":=").Add(read), statusCond(code, c.Statuses, false)).Block(failure.Clone())
		if nilable(c.ResultType) {
			check = jen.If(jen.Id(resName).Op("!=").Nil()).Block(check)
		}
		body = append(body, check)
	}
	body = append(body, jen.Return(jen.Qual(circuitPath, "Success")))
	f.Line()
	var circuits []string
	for _, it := range m.Interfaces {
		for _, mt := range it.Methods {
			if mt.Classify == c && !slices.Contains(circuits, mt.Circuit) {
				circuits = append(circuits, mt.Circuit)
			}
		}
	}
	if len(circuits) > 1 {
		f.Commentf("%s classifies the outcome of a call to circuits %s.", c.Name, strings.Join(circuits, ", "))
	} else {
		f.Commentf("%s classifies the outcome of a call to circuit %s.", c.Name, c.Circuit)
	}
	f.Func().Id(c.Name).Params(params...).Qual(circuitPath, "Outcome").Block(body...)
}

// statusCond renders code's test against the selected statuses.
func statusCond(code string, rs []StatusRange, paren bool) jen.Code {
	var terms []jen.Code
	for _, r := range rs {
		if r.Lo == r.Hi {
			terms = append(terms, jen.Id(code).Op("==").Lit(r.Lo))
		} else {
			terms = append(terms, jen.Id(code).Op(">=").Lit(r.Lo).Op("&&").Id(code).Op("<=").Lit(r.Hi))
		}
	}
	cond := jen.Add(terms[0])
	for _, t := range terms[1:] {
		cond.Op("||").Add(t)
	}
	if paren && len(terms) > 1 {
		return jen.Parens(cond)
	}
	return cond
}

// duration renders d as a constant expression of package time.
func duration(d time.Duration) jen.Code {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"}, {time.Millisecond, "Millisecond"}}
	for _, u := range units {
		if d%u.d == 0 {
			if d == u.d {
				return jen.Qual("time", u.name)
			}
			return jen.Lit(int(d/u.d)).Op("*").Qual("time", u.name)
		}
	}
	return jen.Qual("time", "Duration").Call(jen.Id(strconv.FormatInt(int64(d), 10)))
}
