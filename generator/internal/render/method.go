package render

import (
	"go/types"

	"github.com/dave/jennifer/jen"

	"github.com/circuitgen/circuitgen/generator/internal/model"
)

// method renders one method of the wrapper w.
func method(f *jen.File, w *model.Wrapper, m *model.Method) {
	targs := make([]jen.Code, len(w.TypeParams))
	for i, tp := range w.TypeParams {
		targs[i] = jen.Id(tp.Obj().Name())
	}
	params := make([]jen.Code, len(m.Params))
	args := make([]jen.Code, len(m.Params))
	for i, p := range m.Params {
		if m.Variadic && i == len(m.Params)-1 {
			params[i] = jen.Id(p.Name).Op("...").Add(typeCode(p.Type.(*types.Slice).Elem()))
			args[i] = jen.Id(p.Name).Op("...")
		} else {
			params[i] = jen.Id(p.Name).Add(typeCode(p.Type))
			args[i] = jen.Id(p.Name)
		}
	}
	results := make([]jen.Code, len(m.Results))
	for i, r := range m.Results {
		results[i] = typeCode(r.Type)
	}
	call := jen.Id(m.Recv).Dot(w.Next).Dot(m.Name).Call(args...)
	if m.Skip {
		f.Commentf("%s calls next.%s directly: it is not guarded.", m.Name, m.Name)
	} else {
		f.Commentf("%s calls next.%s through circuit %s.", m.Name, m.Name, m.Field.Circuit.Name)
	}
	decl := f.Func().Params(jen.Id(m.Recv).Op("*").Id(w.Type).Types(targs...)).Id(m.Name).Params(params...)
	switch len(results) {
	case 0:
	case 1:
		decl.Add(results[0])
	default:
		decl.Params(results...)
	}
	if m.Skip {
		if len(results) == 0 {
			decl.Block(call)
		} else {
			decl.Block(jen.Return(call))
		}
		return
	}
	classify := jen.Id(m.Classify.Name)
	if fn := m.Classify.Func; fn != nil {
		classify = jen.Qual(fn.Pkg().Path(), fn.Name())
	}
	decl.Block(guardedBody(m, call, classify)...)
}

// guardedBody renders the body of a guarded method: call next inside the
// method's circuit, classify the result. The function the circuit runs
// declares nothing the method declares: it ignores the context it is
// given, the method's own, and holds next's error in CallErr.
func guardedBody(m *model.Method, call, classifier *jen.Statement) []jen.Code {
	g := guard{m: m, call: call, classifier: classifier}
	switch m.Shape {
	case model.Carrier:
		return g.carrier()
	default:
		return g.errorLast()
	}
}

// guard renders the parts of a guarded method's body.
type guard struct {
	m                *model.Method
	call, classifier *jen.Statement
}

// run renders the call of the method's circuit with a function of body.
func (g guard) run(body ...jen.Code) *jen.Statement {
	m := g.m
	ctx := jen.Qual("context", "Background").Call()
	switch {
	case m.Ctx >= 0:
		ctx = jen.Id(m.Params[m.Ctx].Name)
	case m.Request >= 0:
		ctx = jen.Id(m.Params[m.Request].Name).Dot("Context").Call()
	}
	op := jen.Func().Params(jen.Qual("context", "Context")).Params(jen.Qual(circuitPath, "Outcome"), jen.Error()).Block(body...)
	return jen.Id(m.Recv).Dot(m.Field.Name).Dot("Run").Call(ctx, op)
}

// classify renders the return of the outcome of next's error errName.
func (g guard) classify(errName string) jen.Code {
	args := []jen.Code{jen.Id(errName)}
	if c := g.m.Classify; c.Result >= 0 {
		args = []jen.Code{jen.Id(g.m.Results[c.Result].Name), jen.Id(errName)}
	}
	return jen.Return(g.classifier.Clone().Call(args...), jen.Id(errName))
}

// carrier renders the body of a method whose result carries its error.
func (g guard) carrier() []jen.Code {
	m := g.m
	r := jen.Id(m.Results[0].Name)
	errID := jen.Id(m.Err)
	elem := typeCode(types.Unalias(m.Results[0].Type).(*types.Pointer).Elem())
	return []jen.Code{
		jen.Var().Add(r).Add(typeCode(m.Results[0].Type)),
		jen.Id(m.Err).Op(":=").Add(g.run(
			jen.Add(r).Op("=").Add(g.call),
			jen.Id(m.CallErr).Op(":=").Add(r).Dot("Err").Call(),
			g.classify(m.CallErr),
		)),
		jen.If(jen.Add(r).Op("==").Nil()).Block(
			jen.Comment("rejected: next was not called"),
			jen.Add(r).Op("=").New(elem),
		),
		jen.If(errID.Clone().Op("!=").Nil()).Block(jen.Add(r).Dot("SetErr").Call(errID)),
		jen.Return(r),
	}
}

// errorLast renders the body of a method that returns error last.
func (g guard) errorLast() []jen.Code {
	m := g.m
	locals := m.Results[:len(m.Results)-1]
	if len(locals) == 0 && m.Ran == "" {
		// No local outside the circuit: next's error is err.
		return []jen.Code{jen.Return(g.run(jen.Id(m.Err).Op(":=").Add(g.call), g.classify(m.Err)))}
	}
	var body, inner []jen.Code
	lhs := make([]jen.Code, 0, len(m.Results))
	out := make([]jen.Code, 0, len(m.Results))
	for _, r := range locals {
		body = append(body, jen.Var().Id(r.Name).Add(typeCode(r.Type)))
		lhs = append(lhs, jen.Id(r.Name))
		out = append(out, jen.Id(r.Name))
	}
	out = append(out, jen.Id(m.Err))
	if m.Ran != "" {
		body = append(body, jen.Var().Id(m.Ran).Bool())
		inner = append(inner, jen.Id(m.Ran).Op("=").True())
	}
	if len(locals) == 0 {
		inner = append(inner, jen.Id(m.CallErr).Op(":=").Add(g.call))
	} else {
		inner = append(inner, jen.Var().Id(m.CallErr).Error(), jen.List(append(lhs, jen.Id(m.CallErr))...).Op("=").Add(g.call))
	}
	inner = append(inner, g.classify(m.CallErr))
	body = append(body, jen.Id(m.Err).Op(":=").Add(g.run(inner...)))
	if m.Ran != "" {
		// Like http.RoundTripper and http.Client.Do, close the request's
		// body even when the call was rejected and next never saw it.
		req := jen.Id(m.Params[m.Request].Name).Dot("Body")
		body = append(body, jen.If(jen.Op("!").Id(m.Ran).Op("&&").Add(req.Clone()).Op("!=").Nil()).Block(
			jen.Id("_").Op("=").Add(req.Clone()).Dot("Close").Call(),
		))
	}
	return append(body, jen.Return(out...))
}
