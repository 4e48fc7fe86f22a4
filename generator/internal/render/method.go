package render

import (
	"go/types"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/circuitgen/circuitgen/generator/internal/model"
)

// method renders one method of the wrapper w.
func method(f *jen.File, file *model.File, w *model.Wrapper, m *model.Method) {
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
	switch {
	case m.Skip:
		f.Commentf("%s calls next.%s directly: it is not guarded.", m.Name, m.Name)
	case m.Shape == model.Builder:
		f.Commentf("%s returns next.%s's %s guarded, on this %s's circuits.", m.Name, m.Name, m.Returns[0].Wrapper.Interface, w.Type)
		f.Comment("It takes no claim: the builder's terminal call does.")
	default:
		f.Commentf("%s calls next.%s through circuit %s.", m.Name, m.Name, m.Field.Circuit.Name)
	}
	decl := withResults(f.Func().Params(jen.Id(m.Recv).Op("*").Id(w.Type).Types(targs...)).Id(m.Name).Params(params...), results)
	if m.Skip {
		forward(decl, call, len(results))
		return
	}
	if m.Shape == model.Builder {
		decl.Block(builder(w, m, call)...)
		return
	}
	classify := jen.Id(m.Classify.Name)
	if fn := m.Classify.Func; fn != nil {
		classify = jen.Qual(fn.Pkg().Path(), fn.Name())
	}
	decl.Block(guardedBody(file, w, m, call, classify)...)
	if m.Row != nil {
		f.Line()
		row(f, w, m, classify)
	}
}

// guardedBody renders the body of a guarded method: call next inside the
// method's circuit, classify the result. The function the circuit runs
// declares nothing the method declares: it ignores the context it is
// given, the method's own, and holds next's error in CallErr.
func guardedBody(file *model.File, w *model.Wrapper, m *model.Method, call, classifier *jen.Statement) []jen.Code {
	g := guard{w: w, m: m, call: call, classifier: classifier}
	if file.SQLRow != nil {
		g.sqlRow = file.SQLRow.Func
	}
	switch m.Shape {
	case model.Carrier:
		return g.carrier()
	case model.Row:
		return g.row()
	case model.Stream:
		return g.stream()
	case model.Seq:
		return g.seq()
	case model.Reported:
		return g.reported()
	default:
		return g.errorLast()
	}
}

// guard renders the parts of a guarded method's body.
type guard struct {
	w                *model.Wrapper
	m                *model.Method
	call, classifier *jen.Statement
	// sqlRow is the file's helper making a *sql.Row that carries an
	// error.
	sqlRow string
}

// ctx renders the method's context: its context.Context parameter, its
// request's, or context.Background().
func (g guard) ctx() *jen.Statement {
	m := g.m
	switch {
	case m.Ctx >= 0:
		return jen.Id(m.Params[m.Ctx].Name)
	case m.Request >= 0:
		return jen.Id(m.Params[m.Request].Name).Dot("Context").Call()
	}
	return jen.Qual("context", "Background").Call()
}

// op renders the function of body that the method's circuit runs.
func op(body ...jen.Code) *jen.Statement {
	return jen.Func().Params(jen.Qual("context", "Context")).Params(jen.Qual(circuitPath, "Outcome"), jen.Error()).Block(body...)
}

// run renders the call of the method's circuit with the function fn.
func (g guard) run(fn jen.Code) *jen.Statement {
	return jen.Id(g.m.Recv).Dot(g.m.Field.Name).Dot("Run").Call(g.ctx(), fn)
}

// quiet renders the call of the function m.Op through the method's
// circuit into m.Err: its quiet decision (circuit.Quiet), inlined, or else
// Run. The compiler inlines m.Op into the quiet branch, so a healthy call
// makes no call but next's when its classifier is a generated one that
// reads no result, and a standing rejection makes none (BENCHMARKS.md,
// where the time goes).
func (g guard) quiet() []jen.Code {
	m := g.m
	q, o, err := jen.Id(m.Quiet), jen.Id(m.O), jen.Id(m.Err)
	return []jen.Code{
		jen.Var().Add(err).Error(),
		jen.If(q.Clone().Op(":=").Id(m.Recv).Dot(m.Field.Name).Dot("Quiet").Call(), q.Clone().Dot("Admitted").Call()).Block(
			jen.Var().Add(o).Qual(circuitPath, "Outcome"),
			jen.If(jen.List(o, err).Op("=").Id(m.Op).Call(g.ctx()), jen.Op("!").Add(q).Dot("Settled").Call(o)).Block(
				err.Clone().Op("=").Add(q).Dot("Settle").Call(g.ctx(), o, err),
			),
		).Else().If(err.Clone().Op("=").Add(q).Dot("Rejected").Call(), err.Clone().Op("==").Nil()).Block(
			err.Clone().Op("=").Add(g.run(jen.Id(m.Op))),
		),
	}
}

// classify renders the return of the outcome of next's error errName;
// under fallback=failed, it records whether it is a Failure.
func (g guard) classify(errName string) jen.Code {
	m := g.m
	if m.Fallback != model.FallbackFailed {
		return jen.Return(g.outcome(g.ctx(), errName), jen.Id(errName))
	}
	return jen.Id(m.Outcome).Op(":=").Add(g.outcome(g.ctx(), errName)).Line().
		Id(m.Failed).Op("=").Id(m.Outcome).Op("==").Qual(circuitPath, "Failure").Line().
		Return(jen.Id(m.Outcome), jen.Id(errName))
}

// failedVar renders the declaration of the local recording a Failure,
// under fallback=failed.
func (g guard) failedVar() []jen.Code {
	if g.m.Fallback != model.FallbackFailed {
		return nil
	}
	return []jen.Code{jen.Var().Id(g.m.Failed).Bool()}
}

// fallbackCall renders the call of the fallback's method with the
// method's arguments, its context marked with cause (circuit.WithFallback).
func (g guard) fallbackCall(cause jen.Code) *jen.Statement {
	m := g.m
	args := make([]jen.Code, len(m.Params))
	for i, p := range m.Params {
		a := jen.Id(p.Name)
		switch {
		case i == m.Ctx:
			a = jen.Qual(circuitPath, "WithFallback").Call(jen.Id(p.Name), cause)
		case m.Ctx < 0 && i == m.Request:
			a = jen.Id(p.Name).Dot("WithContext").Call(jen.Qual(circuitPath, "WithFallback").Call(jen.Id(p.Name).Dot("Context").Call(), cause))
		}
		if m.Variadic && i == len(m.Params)-1 {
			a.Op("...")
		}
		args[i] = a
	}
	return jen.Id(m.Recv).Dot(g.w.Fallback).Dot(m.Name).Call(args...)
}

// fallback renders, for a method that falls back, the statements that
// run then when the call's error errName says so: a rejection (a
// *circuit.OpenError), or under fallback=failed a Failure, with an error
// or without (a status counted). outer adds the test that there is one of
// them. then renders what answers from the fallback's call.
func (g guard) fallback(errName string, outer bool, then func(call *jen.Statement) []jen.Code) []jen.Code {
	m := g.m
	if m.Fallback == model.FallbackNever {
		return nil
	}
	cond := jen.Qual("errors", "As").Call(jen.Id(errName), jen.Op("&").Id(m.Open))
	if m.Fallback == model.FallbackFailed {
		cond = jen.Id(m.Failed).Op("||").Add(cond)
	}
	has := jen.Id(m.Recv).Dot(g.w.Fallback).Op("!=").Nil()
	if outer {
		some := jen.Id(errName).Op("!=").Nil()
		if m.Fallback == model.FallbackFailed {
			some = jen.Parens(some.Op("||").Id(m.Failed))
		}
		has = some.Op("&&").Add(has)
	}
	answer := then(g.fallbackCall(jen.Id(errName)))
	if m.Fallback == model.FallbackFailed {
		answer = append(g.dropResponses(false), answer...) // a response counted a failure
	}
	return []jen.Code{jen.If(has).Block(
		jen.Var().Id(m.Open).Op("*").Qual(circuitPath, "OpenError"),
		jen.If(cond).Block(answer...),
	)}
}

// answer renders the return of the fallback's call.
func answer(call *jen.Statement) []jen.Code { return []jen.Code{jen.Return(call)} }

// outcome renders the classifier's call on next's error errName, in the
// call's context ctx.
func (g guard) outcome(ctx jen.Code, errName string) *jen.Statement {
	c := g.m.Classify
	var args []jen.Code
	if c.Ctx {
		args = append(args, ctx)
	}
	if c.Result >= 0 {
		args = append(args, jen.Id(g.m.Results[c.Result].Name))
	}
	return g.classifier.Clone().Call(append(args, jen.Id(errName))...)
}

// admit renders the admission of a deferred call: its Ticket, and the
// statements that run when it is rejected.
func (g guard) admit(rejected ...jen.Code) jen.Code {
	m := g.m
	return jen.List(jen.Id(m.Ticket), jen.Id(m.Err)).Op(":=").Id(m.Recv).Dot(m.Field.Name).Dot("Allow").Call(g.ctx()).Line().
		If(jen.Id(m.Err).Op("!=").Nil()).Block(rejected...)
}

// row renders the body of a method returning a row whose Scan reports the
// call's error: admitted here, settled by the row's Scan.
func (g guard) row() []jen.Code {
	m, r := g.m, g.m.Row
	if len(m.Results) == 2 {
		return g.opened(nil)
	}
	rejected := append(g.fallback(m.Err, false, answer), jen.Return(jen.Op("&").Id(r.Name).Values(jen.Id(r.Err).Op(":").Id(m.Err))))
	return []jen.Code{
		g.admit(rejected...),
		g.panicAtOpen(),
		jen.Id(m.Results[0].Name).Op(":=").Add(g.call),
		jen.Id(m.Opened).Op("=").True(),
		jen.If(jen.Id(m.Results[0].Name).Op("==").Nil()).Block(
			jen.Comment("no row, and no error: a success"),
			jen.Id("_").Op("=").Id(m.Ticket).Dot("Done").Call(jen.Qual(circuitPath, "Success")),
			jen.Return(jen.Nil()),
		),
		jen.Return(jen.Op("&").Id(r.Name).Values(
			jen.Id(r.Next).Op(":").Id(m.Results[0].Name),
			jen.Id(r.Ctx).Op(":").Add(g.ctx()),
			jen.Id(r.Ticket).Op(":").Id(m.Ticket),
		)),
	}
}

// panicAtOpen renders the settlement, as Ignored, of an admitted call
// whose next panics before it returned what settles the call, as Run
// settles a panic: Opened records that it returned.
func (g guard) panicAtOpen() jen.Code {
	m := g.m
	return jen.Var().Id(m.Opened).Bool().Line().Defer().Func().Params().Block(
		jen.If(jen.Op("!").Id(m.Opened)).Block(
			jen.Comment("a panic at open: neither a success nor a failure"),
			jen.Id("_").Op("=").Id(m.Ticket).Dot("Done").Call(jen.Qual(circuitPath, "Ignored")),
		),
	).Call()
}

// stream renders the body of a method returning (S, error), S a server
// stream: admitted here, an error at open settled as a returned error is,
// and otherwise settled by the stream it returns, as a row settles its
// call (render/row.go): at Recv's end, at CloseSend, or, through
// context.AfterFunc, when the caller cancels the call's context first.
func (g guard) stream() []jen.Code {
	m, ticket := g.m, jen.Id(g.m.Ticket)
	afterFunc := jen.Comment("a context cancelled before the stream's end drops it: Ignored (a deadline settles at Recv)").Line().
		Id(m.Stop).Op(":=").Qual("context", "AfterFunc").Call(g.ctx(), jen.Func().Params().Block(
		jen.If(g.ctx().Dot("Err").Call().Op("==").Qual("context", "Canceled")).Block(
			jen.Id("_").Op("=").Add(ticket.Clone()).Dot("Done").Call(jen.Qual(circuitPath, "Ignored")),
		),
	))
	if m.Ctx < 0 && m.Request < 0 {
		afterFunc = jen.Comment("no context to cancel: only the stream settles the call").Line().
			Id(m.Stop).Op(":=").Func().Params().Bool().Block(jen.Return(jen.False()))
	}
	return g.opened(afterFunc)
}

// opened renders the body of a method returning (R, error), R a stream or
// a row: admitted here, an error at open settled as a returned error is,
// else R settles it. A stream's afterFunc, run once it opened, sets the
// stop of its context's AfterFunc.
func (g guard) opened(afterFunc jen.Code) []jen.Code {
	m, r := g.m, g.m.Row
	rejected := append(g.fallback(m.Err, false, answer), jen.Return(jen.Nil(), jen.Id(m.Err)))
	fields := []jen.Code{
		jen.Id(r.Next).Op(":").Id(m.Results[0].Name),
		jen.Id(r.Ctx).Op(":").Add(g.ctx()),
		jen.Id(r.Ticket).Op(":").Id(m.Ticket),
	}
	if afterFunc != nil {
		fields = append(fields, jen.Id(r.Stop).Op(":").Id(m.Stop))
	}
	what := "the stream"
	if afterFunc == nil {
		what = "the call"
	}
	body := append([]jen.Code{g.admit(rejected...)}, g.open(what, m.CallErr)...)
	if afterFunc != nil {
		body = append(body, afterFunc)
	}
	return append(body, jen.Return(jen.Op("&").Id(r.Name).Values(fields...), jen.Nil()))
}

// open renders the call of a method returning (R, error), admitted, with
// the error in the local errName: an error at open settles the call, as a
// returned error does, and is returned, as is a nil R with no error, a
// Success; else R, in the method's first result, settles it later.
func (g guard) open(what, errName string) []jen.Code {
	m, ticket, r := g.m, jen.Id(g.m.Ticket), jen.Id(g.m.Results[0].Name)
	return []jen.Code{
		g.panicAtOpen(),
		jen.List(r.Clone(), jen.Id(errName)).Op(":=").Add(g.call),
		jen.Id(m.Opened).Op("=").True(),
		jen.If(jen.Id(errName).Op("!=").Nil()).Block(
			jen.Comment(what+" did not open: its error settles the call, as a returned error does"),
			jen.If(jen.Id(m.Err).Op("=").Add(ticket.Clone()).Dot("Done").Call(g.outcome(g.ctx(), errName)), jen.Id(m.Err).Op("!=").Nil()).Block(
				jen.Return(jen.Nil(), jen.Id(m.Err)),
			),
			jen.Return(r.Clone(), jen.Id(errName)),
		),
		jen.If(r.Clone().Op("==").Nil()).Block(
			jen.Comment("nothing to read, and no error: a success"),
			jen.Return(jen.Nil(), ticket.Clone().Dot("Done").Call(jen.Qual(circuitPath, "Success"))),
		),
	}
}

// seq renders the body of a method returning an iter.Seq2[T, error]: the
// call is admitted when iteration starts and settled by the first error or
// a clean end; stopping early, or a panic, settles it as Ignored. One
// returning (iter.Seq2[T, error], error) is admitted at the call, and an
// error at open settles it, as a returned error does.
func (g guard) seq() []jen.Code {
	m := g.m
	elem := typeCode(m.Elem)
	seq, ticket := g.call, m.Ticket
	if len(m.Results) == 2 { // opened: each range takes its own admission
		seq, ticket = jen.Id(m.Results[0].Name), m.RangeTicket
	}
	ignored := jen.Qual(circuitPath, "Ignored")
	settle := func(o jen.Code) jen.Code {
		return jen.Id(m.Settled).Op("=").True().Line().Id("_").Op("=").Id(ticket).Dot("Done").Call(o)
	}
	loop := jen.For(jen.List(jen.Id(m.Value), jen.Id(m.CallErr)).Op(":=").Range().Add(seq)).Block(
		jen.If(jen.Id(m.CallErr).Op("!=").Nil().Op("&&").Op("!").Id(m.Settled)).Block(settle(g.outcome(g.ctx(), m.CallErr))),
		jen.If(jen.Op("!").Id(m.Yield).Call(jen.Id(m.Value), jen.Id(m.CallErr))).Block(jen.Return()),
	)
	end := jen.If(jen.Op("!").Id(m.Settled)).Block(
		jen.Id(m.Settled).Op("=").True(),
		jen.If(jen.Id(m.CallErr).Op(":=").Id(ticket).Dot("Done").Call(jen.Qual(circuitPath, "Success")), jen.Id(m.CallErr).Op("!=").Nil()).Block(
			jen.Var().Id(m.Value).Add(typeCode(m.Elem)),
			jen.Id(m.Yield).Call(jen.Id(m.Value), jen.Id(m.CallErr)),
		),
	)
	iterate := []jen.Code{
		jen.Id(m.Settled).Op(":=").False(),
		jen.Defer().Func().Params().Block(
			jen.If(jen.Op("!").Id(m.Settled)).Block(
				jen.Comment("stopped early, or a panic: neither a success nor a failure"),
				jen.Id("_").Op("=").Id(ticket).Dot("Done").Call(ignored),
			),
		).Call(),
		loop,
		end,
	}
	iterator := jen.Func().Params(jen.Id(m.Yield).Func().Params(elem, jen.Error()).Bool())
	if len(m.Results) == 2 {
		rejected := append(g.fallback(m.Err, false, answer), jen.Return(jen.Nil(), jen.Id(m.Err)))
		body := append([]jen.Code{g.admit(rejected...)}, g.open("the iterator", m.OpenErr)...)
		// The call's admission is the first range's; a later range is
		// admitted again, as a call of its own: it may call next again.
		again := jen.If(jen.Id(m.Ranged).Dot("Swap").Call(jen.True())).Block(
			jen.Comment("ranged again: admitted again, as a call of its own"),
			jen.Var().Id(m.RangeErr).Error(),
			jen.If(jen.List(jen.Id(m.RangeTicket), jen.Id(m.RangeErr)).Op("=").Id(m.Recv).Dot(m.Field.Name).Dot("Allow").Call(g.ctx()),
				jen.Id(m.RangeErr).Op("!=").Nil()).Block(
				jen.Var().Id(m.Value).Add(elem),
				jen.Id(m.Yield).Call(jen.Id(m.Value), jen.Id(m.RangeErr)),
				jen.Return(),
			),
		)
		iterate = append([]jen.Code{jen.Id(m.RangeTicket).Op(":=").Id(m.Ticket), again}, iterate...)
		return append(body,
			jen.Var().Id(m.Ranged).Qual("sync/atomic", "Bool"),
			jen.Return(iterator.Block(iterate...), jen.Nil()))
	}
	return []jen.Code{jen.Return(iterator.Block(append([]jen.Code{
		g.admit(append(g.fallback(m.Err, false, func(call *jen.Statement) []jen.Code {
			// Iterate the fallback's sequence instead.
			return []jen.Code{
				jen.For(jen.List(jen.Id(m.Value), jen.Id(m.CallErr)).Op(":=").Range().Add(call)).Block(
					jen.If(jen.Op("!").Id(m.Yield).Call(jen.Id(m.Value), jen.Id(m.CallErr))).Block(jen.Return()),
				),
				jen.Return(),
			}
		}),
			jen.Var().Id(m.Value).Add(typeCode(m.Elem)),
			jen.Id(m.Yield).Call(jen.Id(m.Value), jen.Id(m.Err)),
			jen.Return(),
		)...),
	}, iterate...)...))}
}

// reported renders the body of a method whose result reports its error
// but cannot be set: classified through its error method; a rejection is a
// result made to carry it.
func (g guard) reported() []jen.Code {
	m := g.m
	r := jen.Id(m.Results[0].Name)
	t := m.Results[0].Type
	var reject jen.Code
	switch {
	case m.Reject.Func != nil:
		reject = jen.Qual(m.Reject.Func.Pkg().Path(), m.Reject.Func.Name()).Call(constructorArgs(m.Reject.Func, jen.Id(m.Err))...)
	case m.Reject.Slice:
		reject = jen.Add(typeCode(t)).Values(jen.Values(jen.Id("Err").Op(":").Id(m.Err)))
	case m.Reject.SQLRow:
		reject = jen.Id(g.sqlRow).Call(jen.Id(m.Err))
	}
	body := append([]jen.Code{jen.Var().Add(r).Add(typeCode(t)), jen.Var().Id(m.Ran).Bool()}, g.failedVar()...)
	body = append(body, jen.Id(m.Err).Op(":=").Add(g.run(op(
		jen.Id(m.Ran).Op("=").True(),
		jen.Add(r).Op("=").Add(g.call),
		jen.Id(m.CallErr).Op(":=").Add(r).Dot(m.ErrMethod).Call(),
		g.classify(m.CallErr),
	))))
	body = append(body, g.spentReaders()...)
	body = append(body, g.fallback(m.Err, true, answer)...)
	return append(body,
		jen.If(jen.Op("!").Id(m.Ran)).Block(
			jen.Comment("rejected: next was not called"),
			jen.Return(reject),
		),
		jen.Return(r),
	)
}

// constructorArgs renders the arguments of a call of the constructor fn
// of a result carrying the rejection rejection: it for the error, an
// empty struct for an any (a document: mongo's
// NewSingleResultFromDocument drops the error for a nil one), zero values
// for the other parameters, none for a final variadic one.
func constructorArgs(fn *types.Func, rejection jen.Code) []jen.Code {
	sig := fn.Type().(*types.Signature)
	var args []jen.Code
	for i := range sig.Params().Len() {
		t := sig.Params().At(i).Type()
		switch {
		case sig.Variadic() && i == sig.Params().Len()-1:
		case types.Identical(t, types.Universe.Lookup("error").Type()):
			args = append(args, rejection)
		case isAny(t):
			args = append(args, jen.Struct().Values())
		default:
			args = append(args, zeroValue(t))
		}
	}
	return args
}

// isAny reports whether t is an interface with no methods.
func isAny(t types.Type) bool {
	it, ok := t.Underlying().(*types.Interface)
	return ok && it.Empty()
}

// zeroValue renders the zero value of t: a literal, nil, or T{}.
func zeroValue(t types.Type) jen.Code {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return jen.False()
		case u.Info()&types.IsString != 0:
			return jen.Lit("")
		case u.Kind() == types.UnsafePointer:
			return jen.Nil()
		}
		return jen.Lit(0)
	case *types.Struct, *types.Array:
		return jen.Add(typeCode(t)).Values()
	}
	return jen.Nil()
}

// carrier renders the body of a method whose result carries its error.
func (g guard) carrier() []jen.Code {
	m := g.m
	r := jen.Id(m.Results[0].Name)
	errID := jen.Id(m.Err)
	elem := typeCode(types.Unalias(m.Results[0].Type).(*types.Pointer).Elem())
	body := append([]jen.Code{jen.Var().Add(r).Add(typeCode(m.Results[0].Type))}, g.failedVar()...)
	body = append(body, jen.Id(m.Err).Op(":=").Add(g.run(op(
		jen.Add(r).Op("=").Add(g.call),
		jen.Id(m.CallErr).Op(":=").Add(r).Dot(m.ErrMethod).Call(),
		g.classify(m.CallErr),
	))))
	body = append(body, g.spentReaders()...)
	body = append(body, g.fallback(m.Err, true, answer)...)
	return append(body,
		jen.If(jen.Add(r).Op("==").Nil()).Block(
			jen.Comment("rejected: next was not called"),
			jen.Add(r).Op("=").New(elem),
		),
		jen.If(errID.Clone().Op("!=").Nil()).Block(jen.Add(r).Dot("SetErr").Call(errID)),
		jen.Return(r),
	)
}

// errorLast renders the body of a method that returns error last.
func (g guard) errorLast() []jen.Code {
	m := g.m
	locals := m.Results[:len(m.Results)-1]
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
	body = append(body, g.failedVar()...)
	if len(locals) == 0 {
		inner = append(inner, jen.Id(m.CallErr).Op(":=").Add(g.call))
	} else {
		inner = append(inner, jen.Var().Id(m.CallErr).Error(), jen.List(append(lhs, jen.Id(m.CallErr))...).Op("=").Add(g.call))
	}
	inner = append(inner, g.classify(m.CallErr))
	body = append(body, jen.Id(m.Op).Op(":=").Add(op(inner...)))
	body = append(body, g.quiet()...)
	// The fallback, when the call did not go through, before the
	// request's body is closed: the fallback owns it as next would.
	body = append(body, g.replayBody()...)
	body = append(body, g.spentReaders()...)
	body = append(body, g.fallback(m.Err, true, answer)...)
	if m.Ran != "" {
		// Like http.RoundTripper and http.Client.Do, close the request's
		// body even when the call was rejected and next never saw it.
		req := jen.Id(m.Params[m.Request].Name).Dot("Body")
		body = append(body, jen.If(jen.Op("!").Id(m.Ran).Op("&&").Add(req.Clone()).Op("!=").Nil()).Block(
			jen.Id("_").Op("=").Add(req.Clone()).Dot("Close").Call(),
		))
	}
	if drop := g.dropResponses(true); drop != nil {
		// Like http.RoundTripper and http.Client.Do, no response with an
		// error: one whose settlement failed after it ran (a
		// *circuit.StateError) is closed, so its connection is not lost.
		body = append(body, jen.If(jen.Id(m.Err).Op("!=").Nil()).Block(drop...))
	}
	body = append(body, guardReturned(g.w, m)...)
	return append(body, jen.Return(out...))
}

// replayBody renders, for a method taking a request whose fallback answers
// a failure, the request's body made again for the fallback: next read it. A copy of the request takes GetBody's body; with
// no GetBody, or when it fails, the fallback does not answer the failure,
// as http.Client does not follow a redirect it cannot send again.
func (g guard) replayBody() []jen.Code {
	m := g.m
	if m.Fallback != model.FallbackFailed || m.Request < 0 {
		return nil
	}
	req := jen.Id(m.Params[m.Request].Name)
	cond := jen.Id(m.Failed).Op("&&").Id(m.Recv).Dot(g.w.Fallback).Op("!=").Nil().
		Op("&&").Add(req.Clone()).Dot("Body").Op("!=").Nil().Op("&&").Add(req.Clone()).Dot("Body").Op("!=").Qual("net/http", "NoBody")
	return []jen.Code{jen.If(cond).Block(
		jen.Comment("next read the body: the fallback gets it again from GetBody, or does not answer"),
		jen.Id(m.Failed).Op("=").False(),
		jen.If(req.Clone().Dot("GetBody").Op("!=").Nil()).Block(
			jen.If(jen.List(jen.Id(m.Replay), jen.Id(m.ReplayErr)).Op(":=").Add(req.Clone()).Dot("GetBody").Call(), jen.Id(m.ReplayErr).Op("==").Nil()).Block(
				req.Clone().Op("=").Add(req.Clone()).Dot("WithContext").Call(req.Clone().Dot("Context").Call()),
				jen.List(req.Clone().Dot("Body"), jen.Id(m.Failed)).Op("=").List(jen.Id(m.Replay), jen.True()),
			),
		),
	)}
}

// spentReaders renders, for a method taking a body (an io.Reader) whose
// fallback answers a failure, that the fallback does not answer when a
// body is not nil: next may have read it, and it cannot be made again, as
// a request's without GetBody (replayBody). In a method returning a
// *http.Response, an io.Reader or io.ReadCloser that is http.NoBody is no
// body either.
func (g guard) spentReaders() []jen.Code {
	m := g.m
	if m.Fallback != model.FallbackFailed || len(m.Readers) == 0 {
		return nil
	}
	http := slices.ContainsFunc(m.Results, func(r model.Var) bool { return model.IsResponse(r.Type) })
	var some *jen.Statement
	for _, i := range m.Readers {
		p := m.Params[i]
		c := jen.Id(p.Name).Op("!=").Nil()
		if http && (model.IsNamed(p.Type, "io", "Reader") || model.IsNamed(p.Type, "io", "ReadCloser")) {
			c.Op("&&").Id(p.Name).Op("!=").Qual("net/http", "NoBody")
		}
		if some == nil {
			some = c
		} else {
			some = some.Op("||").Add(c)
		}
	}
	if len(m.Readers) > 1 {
		some = jen.Parens(some)
	}
	cond := jen.Id(m.Failed).Op("&&").Id(m.Recv).Dot(g.w.Fallback).Op("!=").Nil().Op("&&").Add(some)
	return []jen.Code{jen.If(cond).Block(
		jen.Comment("next may have read the body, which cannot be made again: the fallback does not answer"),
		jen.Id(m.Failed).Op("=").False(),
	)}
}

// dropResponses renders, for a method returning error last, the closing
// of each *http.Response it returns that is not nil, and with clear its
// nil: a response not returned is closed, so its connection is not lost.
func (g guard) dropResponses(clear bool) []jen.Code {
	m := g.m
	if m.Shape != model.ErrorLast {
		return nil
	}
	var drop []jen.Code
	for _, r := range m.Results[:len(m.Results)-1] {
		if model.IsResponse(r.Type) {
			drop = append(drop, jen.If(jen.Id(r.Name).Op("!=").Nil().Op("&&").Id(r.Name).Dot("Body").Op("!=").Nil()).Block(
				jen.Id("_").Op("=").Id(r.Name).Dot("Body").Dot("Close").Call(),
			))
			if clear {
				drop = append(drop, jen.Id(r.Name).Op("=").Nil())
			}
		}
	}
	return drop
}

// guardReturned renders the statements that make each result of m, a
// method of w, whose interface this file guards come back guarded: on w's
// circuit of each name w has, so that the circuits a caller prepared
// (w.With) guard the result too, and on the same Breaker otherwise.
func guardReturned(w *model.Wrapper, m *model.Method) []jen.Code {
	var body []jen.Code
	for _, ret := range m.Returns {
		r := jen.Id(m.Results[ret.Result].Name)
		args := []jen.Code{r.Clone()}
		for _, fd := range ret.Wrapper.Fields {
			circuit := jen.Id(m.Recv).Dot(m.Field.Name).Dot("Breaker").Call().Dot("Circuit").Call(jen.Lit(fd.Circuit.Name), jen.Id(fd.Policy.Var))
			for _, own := range w.Fields {
				if own.Circuit.Name == fd.Circuit.Name {
					circuit = jen.Id(m.Recv).Dot(own.Name)
					break
				}
			}
			args = append(args, circuit)
		}
		body = append(body, jen.If(r.Clone().Op("!=").Nil()).Block(
			r.Clone().Op("=").Id(ret.Wrapper.With).Call(args...),
		))
	}
	return body
}

// builder renders the body of a Builder method: next's result, guarded;
// no claim is taken.
func builder(w *model.Wrapper, m *model.Method, call *jen.Statement) []jen.Code {
	body := []jen.Code{jen.Id(m.Results[0].Name).Op(":=").Add(call)}
	body = append(body, guardReturned(w, m)...)
	return append(body, jen.Return(jen.Id(m.Results[0].Name)))
}
