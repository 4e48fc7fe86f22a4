package generator

import (
	"bytes"
	"fmt"
	"go/types"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"
)

// Import paths generated code uses.
const (
	circuitPath    = "github.com/circuitgen/circuitgen/runtime/circuit"
	grpcStatusPath = "google.golang.org/grpc/status"
	grpcCodesPath  = "google.golang.org/grpc/codes"
)

// render renders the model, with the names n chose, as a gofmt'd Go file.
func render(m *Model, n *Names) ([]byte, error) {
	f := jen.NewFilePathName(m.PkgPath, m.PkgName)
	f.HeaderComment(Header)
	for path, name := range n.Imports {
		if n.Aliased[path] {
			f.ImportAlias(path, name)
		} else {
			f.ImportName(path, name)
		}
	}
	if len(m.Circuits) > 0 {
		f.Var().DefsFunc(func(g *jen.Group) {
			for _, c := range m.Circuits {
				g.Id(n.Policies[c]).Op("=").Add(policyCode(c))
			}
		})
	}
	rendered := map[*Classifier]bool{}
	for _, it := range m.Interfaces {
		renderWrapper(f, it, n)
		for _, mt := range it.Methods {
			f.Line()
			renderMethod(f, it, mt, n)
			if c := mt.Classify; c != nil && c.Func == nil && !rendered[c] {
				rendered[c] = true
				f.Line()
				renderClassifier(f, m, c, n)
			}
		}
	}
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", m.Path, err)
	}
	return groupImports(buf.Bytes()), nil
}

// policyCode renders a circuit's policy: every field that is not zero, but
// MinCalls and Window without FailureRate, which do nothing then.
func policyCode(c *Circuit) jen.Code {
	var fields []jen.Code
	for _, k := range schema {
		if k.Field == "" || c.Policy.FailureRate == 0 && (k.Field == "MinCalls" || k.Field == "Window") {
			continue
		}
		var v jen.Code
		switch x := fieldValue(c.Policy, k.Field).(type) {
		case int:
			if x != 0 {
				v = jen.Lit(x)
			}
		case float64:
			if x != 0 {
				v = jen.Lit(x)
			}
		case time.Duration:
			if x != 0 {
				v = duration(x)
			}
		}
		if v != nil {
			fields = append(fields, jen.Id(k.Field).Op(":").Add(v))
		}
	}
	return jen.Qual(circuitPath, "Policy").Values(fields...)
}

// renderWrapper renders the wrapper type of it and its constructors.
func renderWrapper(f *jen.File, it *Interface, n *Names) {
	w := n.Wrappers[it]
	tparams := make([]jen.Code, len(it.TypeParams))
	targs := make([]jen.Code, len(it.TypeParams))
	for i, tp := range it.TypeParams {
		tparams[i] = jen.Id(tp.Obj().Name()).Add(constraint(tp.Constraint()))
		targs[i] = jen.Id(tp.Obj().Name())
	}
	iface := func() *jen.Statement { return jen.Qual(it.PkgPath, it.Name).Types(targs...) }
	wrapper := func() *jen.Statement { return jen.Id(it.Wrapper).Types(targs...) }
	circuitType := func() *jen.Statement { return jen.Op("*").Qual(circuitPath, "Circuit") }

	f.Line()
	doc(f, "%s is a %s that runs every call of a guarded method through a circuit breaker. While a method's circuit is open, the method returns a *circuit.OpenError without calling next:", it.Wrapper, it.Name)
	f.Comment("")
	for _, line := range usage(it, n) {
		f.Comment("\t" + line)
	}
	fields := []jen.Code{jen.Id(w.Next).Add(iface())}
	for _, c := range it.Circuits {
		fields = append(fields, jen.Id(w.Fields[c]).Add(circuitType()).Comment(c.Name))
	}
	f.Type().Id(it.Wrapper).Types(tparams...).Struct(fields...)

	f.Line()
	doc(f, "%s returns a %s that calls next through the circuits of b, with the policies circuitgen was given.", it.Constructor, it.Wrapper)
	binds := []jen.Code{jen.Id(w.NewNext)}
	for _, c := range it.Circuits {
		binds = append(binds, jen.Id(w.NewBreaker).Dot("Circuit").Call(jen.Lit(c.Name), jen.Id(n.Policies[c])))
	}
	f.Func().Id(it.Constructor).Types(tparams...).Params(jen.Id(w.NewNext).Add(iface()), jen.Id(w.NewBreaker).Op("*").Qual(circuitPath, "Breaker")).Op("*").Add(wrapper()).Block(
		jen.Return(jen.Id(it.With).Types(targs...).CallFunc(func(g *jen.Group) {
			for _, b := range binds {
				g.Line().Add(b)
			}
			g.Line()
		})),
	)

	f.Line()
	var uses []string
	for _, c := range it.Circuits {
		uses = append(uses, fmt.Sprintf("%s for circuit %s", w.WithCircuits[c], c.Name))
	}
	doc(f, "%s returns a %s that calls next through circuits the caller prepared with Breaker.Circuit: %s.", it.With, it.Wrapper, strings.Join(uses, ", "))
	params := []jen.Code{jen.Id(w.WithNext).Add(iface())}
	values := []jen.Code{jen.Id(w.Next).Op(":").Id(w.WithNext)}
	for i, c := range it.Circuits {
		p := jen.Id(w.WithCircuits[c])
		if i == len(it.Circuits)-1 {
			p.Add(circuitType())
		}
		params = append(params, p)
		values = append(values, jen.Id(w.Fields[c]).Op(":").Id(w.WithCircuits[c]))
	}
	f.Func().Id(it.With).Types(tparams...).Params(params...).Op("*").Add(wrapper()).Block(
		jen.Return(jen.Op("&").Add(wrapper()).Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, values...)),
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
}

// usage returns the lines of the wrapper's usage example.
func usage(it *Interface, n *Names) []string {
	var first *Method
	for _, mt := range it.Methods {
		if !mt.Skip {
			first = mt
			break
		}
	}
	args := make([]string, len(first.Params))
	for i, p := range first.Params {
		args[i] = p.Name
		if args[i] == "" || args[i] == "_" {
			args[i] = "…"
		}
	}
	call := fmt.Sprintf("client.%s(%s)", first.Name, strings.Join(args, ", "))
	var results []string
	if first.Carrier {
		call += ".Err()"
	} else {
		for range len(first.Results) - 1 {
			results = append(results, "_")
		}
	}
	lhs := strings.Join(append(results, "err"), ", ")
	return []string{
		fmt.Sprintf("client := %s(next, b) // b: the application's *circuit.Breaker", it.Constructor),
		fmt.Sprintf("%s := %s", lhs, call),
		"var open *circuit.OpenError",
		"if errors.As(err, &open) {",
		fmt.Sprintf("\t// circuit %s is open: retry after open.RetryAfter()", first.Circuit.Name),
		"}",
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

// renderMethod renders one method of the wrapper.
func renderMethod(f *jen.File, it *Interface, mt *Method, n *Names) {
	names := n.Methods[mt]
	targs := make([]jen.Code, len(it.TypeParams))
	for i, tp := range it.TypeParams {
		targs[i] = jen.Id(tp.Obj().Name())
	}
	params := make([]jen.Code, len(mt.Params))
	args := make([]jen.Code, len(mt.Params))
	for i, p := range mt.Params {
		name := names.Params[i]
		if mt.Variadic && i == len(mt.Params)-1 {
			params[i] = jen.Id(name).Op("...").Add(typeCode(p.Type.(*types.Slice).Elem()))
			args[i] = jen.Id(name).Op("...")
		} else {
			params[i] = jen.Id(name).Add(typeCode(p.Type))
			args[i] = jen.Id(name)
		}
	}
	results := make([]jen.Code, len(mt.Results))
	for i, r := range mt.Results {
		results[i] = typeCode(r.Type)
	}
	recv := names.Recv
	w := n.Wrappers[it]
	call := jen.Id(recv).Dot(w.Next).Dot(mt.Name).Call(args...)
	if mt.Skip {
		f.Commentf("%s calls next.%s directly: it is not guarded.", mt.Name, mt.Name)
	} else {
		f.Commentf("%s calls next.%s through circuit %s.", mt.Name, mt.Name, mt.Circuit.Name)
	}
	decl := f.Func().Params(jen.Id(recv).Op("*").Id(it.Wrapper).Types(targs...)).Id(mt.Name).Params(params...)
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
	classify := jen.Id(n.Classifiers[mt.Classify])
	if fn := mt.Classify.Func; fn != nil {
		classify = jen.Qual(fn.Pkg().Path(), fn.Name())
	}
	decl.Block(guardedBody(mt, names, w, call, classify)...)
}

// guardedBody renders the body of a guarded method: call next inside the
// method's circuit, classify the result.
func guardedBody(mt *Method, names *MethodNames, w *WrapperNames, call, classifier *jen.Statement) []jen.Code {
	ctx := jen.Qual("context", "Background").Call()
	opParam := jen.Qual("context", "Context")
	switch {
	case mt.Ctx >= 0:
		name := names.Params[mt.Ctx]
		ctx = jen.Id(name)
		opParam = jen.Id(name).Qual("context", "Context")
	case mt.Request >= 0:
		ctx = jen.Id(names.Params[mt.Request]).Dot("Context").Call()
	}
	errID := jen.Id(names.Err)
	classifyArgs := []jen.Code{errID}
	if c := mt.Classify; c.Result >= 0 {
		classifyArgs = []jen.Code{jen.Id(names.Results[c.Result]), errID}
	}
	classify := classifier.Call(classifyArgs...)
	run := func(body ...jen.Code) *jen.Statement {
		op := jen.Func().Params(opParam).Params(jen.Qual(circuitPath, "Outcome"), jen.Error()).Block(body...)
		return jen.Id(names.Recv).Dot(w.Fields[mt.Circuit]).Dot("Run").Call(ctx, op)
	}
	ret := jen.Return(classify, jen.Id(names.Err))
	if mt.Carrier {
		r := jen.Id(names.Results[0])
		elem := typeCode(types.Unalias(mt.Results[0].Type).(*types.Pointer).Elem())
		return []jen.Code{
			jen.Var().Add(r).Add(typeCode(mt.Results[0].Type)),
			jen.Id(names.Err).Op(":=").Add(run(
				jen.Add(r).Op("=").Add(call),
				jen.Id(names.Err).Op(":=").Add(r).Dot("Err").Call(),
				ret,
			)),
			jen.If(jen.Add(r).Op("==").Nil()).Block(
				jen.Comment("rejected: next was not called"),
				jen.Add(r).Op("=").New(elem),
			),
			jen.If(errID.Clone().Op("!=").Nil()).Block(jen.Add(r).Dot("SetErr").Call(errID)),
			jen.Return(r),
		}
	}
	if len(names.Results) == 0 && names.Ran == "" {
		return []jen.Code{jen.Return(run(jen.Id(names.Err).Op(":=").Add(call), ret))}
	}
	var body, inner []jen.Code
	lhs := make([]jen.Code, 0, len(mt.Results))
	out := make([]jen.Code, 0, len(mt.Results))
	for i, name := range names.Results {
		body = append(body, jen.Var().Id(name).Add(typeCode(mt.Results[i].Type)))
		lhs = append(lhs, jen.Id(name))
		out = append(out, jen.Id(name))
	}
	lhs = append(lhs, jen.Id(names.Err))
	out = append(out, jen.Id(names.Err))
	if names.Ran != "" {
		body = append(body, jen.Var().Id(names.Ran).Bool())
		inner = append(inner, jen.Id(names.Ran).Op("=").True())
	}
	inner = append(inner, jen.Var().Id(names.Err).Error(), jen.List(lhs...).Op("=").Add(call), ret)
	body = append(body, jen.Id(names.Err).Op(":=").Add(run(inner...)))
	if names.Ran != "" {
		// Like http.RoundTripper and http.Client.Do, close the request's
		// body even when the call was rejected and next never saw it.
		req := jen.Id(names.Params[mt.Request]).Dot("Body")
		body = append(body, jen.If(jen.Op("!").Id(names.Ran).Op("&&").Add(req.Clone()).Op("!=").Nil()).Block(
			jen.Id("_").Op("=").Add(req.Clone()).Dot("Close").Call(),
		))
	}
	return append(body, jen.Return(out...))
}

// renderClassifier renders a generated classifier.
func renderClassifier(f *jen.File, m *Model, c *Classifier, n *Names) {
	names := n.Locals[c]
	errID := func() *jen.Statement { return jen.Id(names.Err) }
	params := []jen.Code{errID().Error()}
	if c.Result >= 0 {
		params = []jen.Code{jen.Id(names.Result).Add(typeCode(c.ResultType)), errID().Error()}
	}
	failure := jen.Return(jen.Qual(circuitPath, "Failure"))
	var onErr []jen.Code
	targets := names.Targets
	for _, e := range c.Errors {
		if e.Var != nil {
			onErr = append(onErr, jen.If(jen.Qual("errors", "Is").Call(errID(), jen.Qual(e.Var.Pkg().Path(), e.Var.Name()))).Block(failure.Clone()))
			continue
		}
		v := targets[0]
		targets = targets[1:]
		onErr = append(onErr,
			jen.Var().Id(v).Add(typeCode(e.Type)),
			jen.If(jen.Qual("errors", "As").Call(errID(), jen.Op("&").Id(v))).Block(failure.Clone()),
		)
	}
	if len(c.Statuses) > 0 {
		onErr = append(onErr, jen.If(
			jen.List(jen.Id(names.Code), jen.Id(names.OK)).Op(":=").Qual(circuitPath, "ErrorStatus").Call(errID()),
			jen.Id(names.OK).Op("&&").Add(statusCond(names.Code, c.Statuses, true)),
		).Block(failure.Clone()))
	}
	if len(c.Codes) > 0 {
		codes := make([]jen.Code, len(c.Codes))
		for i, code := range c.Codes {
			codes[i] = jen.Qual(grpcCodesPath, code)
		}
		// Only an error carrying a status counts: status.Code would
		// give Unknown for every other error.
		onErr = append(onErr, jen.If(
			jen.List(jen.Id(names.Status), jen.Id(names.OK)).Op(":=").Qual(grpcStatusPath, "FromError").Call(errID()),
			jen.Id(names.OK),
		).Block(jen.Switch(jen.Id(names.Status).Dot("Code").Call()).Block(
			jen.Case(codes...).Block(failure.Clone()),
		)))
	}
	onErr = append(onErr, jen.Return(jen.Qual(circuitPath, "Ignored")))
	body := []jen.Code{jen.If(errID().Op("!=").Nil()).Block(onErr...)}
	if c.Result >= 0 {
		read := jen.Id(names.Result).Dot("StatusCode")
		if c.ResultKind == StatusMethod {
			read.Call()
		}
		check := jen.If(jen.Id(names.Code).Op(":=").Add(read), statusCond(names.Code, c.Statuses, false)).Block(failure.Clone())
		if nilable(c.ResultType) {
			check = jen.If(jen.Id(names.Result).Op("!=").Nil()).Block(check)
		}
		body = append(body, check)
	}
	body = append(body, jen.Return(jen.Qual(circuitPath, "Success")))
	name := n.Classifiers[c]
	users := circuitsOf(m, c)
	doc(f, "%s returns Failure for %s; Ignored for any other error; Success otherwise. Circuit%s %s use%s it.", name, describeRule(c, m.PkgPath),
		map[bool]string{true: "s"}[len(users) > 1], strings.Join(users, ", "), map[bool]string{false: "s"}[len(users) > 1])
	f.Func().Id(name).Params(params...).Qual(circuitPath, "Outcome").Block(body...)
}

// describeRule says in words what a classifier selects, naming the types
// of package home unqualified.
func describeRule(c *Classifier, home string) string {
	qual := func(p *types.Package) string {
		if p.Path() == home {
			return ""
		}
		return p.Name()
	}
	var parts []string
	for _, e := range c.Errors {
		if e.Var != nil {
			parts = append(parts, types.ObjectString(e.Var, qual)[len("var "):])
			parts[len(parts)-1], _, _ = strings.Cut(parts[len(parts)-1], " ")
		} else {
			parts = append(parts, types.TypeString(e.Type, qual))
		}
	}
	if len(c.Statuses) > 0 {
		var ss []string
		for _, r := range c.Statuses {
			if r.Lo == r.Hi {
				ss = append(ss, strconv.Itoa(r.Lo))
			} else {
				ss = append(ss, fmt.Sprintf("%d-%d", r.Lo, r.Hi))
			}
		}
		parts = append(parts, "HTTP status "+strings.Join(ss, ", "))
	}
	if len(c.Codes) > 0 {
		parts = append(parts, "gRPC code "+strings.Join(c.Codes, ", "))
	}
	return strings.Join(parts, ", ")
}

// circuitsOf returns the circuits whose methods use c.
func circuitsOf(m *Model, c *Classifier) []string {
	var names []string
	for _, it := range m.Interfaces {
		for _, mt := range it.Methods {
			if mt.Classify == c && !slices.Contains(names, mt.Circuit.Name) {
				names = append(names, mt.Circuit.Name)
			}
		}
	}
	return names
}

// doc renders a doc comment, wrapped at 80 columns.
func doc(f *jen.File, format string, args ...any) {
	line := ""
	for _, w := range strings.Fields(fmt.Sprintf(format, args...)) {
		if line != "" && len(line)+1+len(w) > 77 {
			f.Comment(line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	f.Comment(line)
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
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"}, {time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"}}
	for _, u := range units {
		if d%u.d == 0 {
			if d == u.d {
				return jen.Qual("time", u.name)
			}
			return jen.Lit(int(d/u.d)).Op("*").Qual("time", u.name)
		}
	}
	return jen.Lit(int(d)).Op("*").Qual("time", "Nanosecond")
}

// groupImports puts the standard library's imports of a rendered file in a
// group of their own, before the others, as goimports does.
func groupImports(src []byte) []byte {
	start := bytes.Index(src, []byte("\nimport (\n"))
	if start < 0 {
		return src
	}
	start += len("\nimport (\n")
	end := bytes.Index(src[start:], []byte("\n)\n"))
	if end < 0 {
		return src
	}
	end += start
	var std, other []string
	for _, line := range strings.Split(string(src[start:end]), "\n") {
		path := line[strings.IndexByte(line, '"')+1:]
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			other = append(other, line)
		} else {
			std = append(std, line)
		}
	}
	if len(std) == 0 || len(other) == 0 {
		return src
	}
	var out bytes.Buffer
	out.Write(src[:start])
	out.WriteString(strings.Join(std, "\n") + "\n\n" + strings.Join(other, "\n"))
	out.Write(src[end:])
	return out.Bytes()
}
