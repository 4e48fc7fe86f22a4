package render

import (
	"fmt"
	"go/types"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/circuitgen/circuitgen/generator/internal/model"
)

// row renders the row type the Row method m of w returns: it implements
// the method's result, forwards every method to the row next returned,
// and settles the call in Scan with classify's outcome of Scan's error (a
// cursor's, with Next() bool and Err() error, only of an error), in Err()
// error with its outcome of an error Err reports, in a cursor's Next
// returning false with the outcome of Err (its end), and in Close with
// the outcome of the Err next reports once closed (a cursor's) or as
// Ignored; the first settles it. A rejected row's Scan returns the
// rejection, its other methods zero values and the rejection as an error
// last.
//
// A stream's type (Stream) is the same pattern: its Recv settles the call
// at the stream's first error, a Success at io.EOF and otherwise
// classify's outcome (RecvMsg too), or at its first message when the call
// is a half-open probe, a Success; Close settles it as Ignored, and
// CloseSend, which closes only the send side, nothing. Every settlement
// stops the AfterFunc of the call's context that settles it as Ignored
// when the caller cancels it first. A rejected call has no stream, so none
// of its methods meets a rejection.
func row(f *jen.File, w *model.Wrapper, m *model.Method, classify *jen.Statement) {
	r := m.Row
	iface := types.TypeString(r.Iface, func(p *types.Package) string { return p.Name() })
	fields := []jen.Code{
		jen.Id(r.Next).Add(typeCode(r.Iface)),
		jen.Id(r.Ctx).Qual("context", "Context"),
		jen.Id(r.Ticket).Op("*").Qual(circuitPath, "Ticket"),
	}
	if r.Stream {
		var drops []string
		for _, fn := range r.Methods {
			if isCloseMethod(fn) {
				drops = append(drops, fn.Name())
			}
		}
		drops = append(drops, "the call's context cancelled first")
		ends := drops[len(drops)-1]
		if len(drops) > 1 {
			ends = strings.Join(drops[:len(drops)-1], ", ") + " or " + ends
		}
		doc(f, "%s is the %s that %s.%s returns: its Recv settles the call on circuit %s at the stream's end, a success at io.EOF, or a half-open probe at its first message, a success; %s settles it as Ignored.",
			r.Name, iface, w.Type, m.Name, m.Field.Circuit.Name, ends)
		fields = append(fields, jen.Id(r.Stop).Func().Params().Bool())
	} else {
		doc(f, "%s is the %s that %s.%s returns: its Scan settles the call on circuit %s, and returns the *circuit.OpenError when the call was rejected.",
			r.Name, iface, w.Type, m.Name, m.Field.Circuit.Name)
		fields = append(fields, jen.Id(r.Err).Error())
	}
	f.Type().Id(r.Name).Struct(fields...)
	recv := func() *jen.Statement { return jen.Id(r.Recv) }
	// done renders the settlement of the call with outcome o: a stream's
	// first stops its context's AfterFunc.
	done := func(o jen.Code) []jen.Code {
		settle := jen.Id("_").Op("=").Add(recv()).Dot(r.Ticket).Dot("Done").Call(o)
		if r.Stream {
			return []jen.Code{recv().Dot(r.Stop).Call(), settle}
		}
		return []jen.Code{settle}
	}
	for _, fn := range r.Methods {
		sig := fn.Type().(*types.Signature)
		params := make([]jen.Code, sig.Params().Len())
		args := make([]jen.Code, sig.Params().Len())
		for i := range sig.Params().Len() {
			t := sig.Params().At(i).Type()
			if sig.Variadic() && i == sig.Params().Len()-1 {
				params[i] = jen.Id(r.Params[i]).Op("...").Add(typeCode(t.(*types.Slice).Elem()))
				args[i] = jen.Id(r.Params[i]).Op("...")
			} else {
				params[i] = jen.Id(r.Params[i]).Add(typeCode(t))
				args[i] = jen.Id(r.Params[i])
			}
		}
		results := make([]jen.Code, sig.Results().Len())
		for i := range sig.Results().Len() {
			results[i] = typeCode(sig.Results().At(i).Type())
		}
		call := recv().Dot(r.Next).Dot(fn.Name()).Call(args...)
		f.Line()
		decl := withResults(f.Func().Params(recv().Op("*").Id(r.Name)).Id(fn.Name()).Params(params...), results)
		g := guard{m: m, classifier: classify}
		if fn.Name() != "Scan" || r.Stream {
			var body []jen.Code
			if !r.Stream {
				// A rejected row has no row of next's: its methods return
				// zero values, and the rejection as an error last.
				body = append(body, jen.If(recv().Dot(r.Err).Op("!=").Nil()).Block(rejected(r, sig)...))
			}
			switch {
			case r.Stream && (isRecvMethod(fn) || isRecvMsgMethod(fn)):
				// A stream's end settles the call: io.EOF, a clean end,
				// as a Success, another error as classify says.
				e := jen.Id(r.ScanErr)
				lhs, out := []jen.Code{e.Clone()}, []jen.Code{e.Clone()}
				if len(results) == 2 {
					lhs = []jen.Code{jen.Id(r.Value), e.Clone()}
					out = []jen.Code{jen.Id(r.Value), e.Clone()}
				}
				doneOut := slices.Clone(out)
				doneOut[len(doneOut)-1] = jen.Id(r.DoneErr)
				body = append(body,
					jen.List(lhs...).Op(":=").Add(call),
					jen.If(e.Clone().Op("!=").Nil()).Block(
						recv().Dot(r.Stop).Call(),
						jen.If(e.Clone().Op("==").Qual("io", "EOF")).Block(
							jen.Id("_").Op("=").Add(recv()).Dot(r.Ticket).Dot("Done").Call(jen.Qual(circuitPath, "Success")),
							jen.Return(out...),
						),
						jen.If(
							jen.Id(r.DoneErr).Op(":=").Add(recv()).Dot(r.Ticket).Dot("Done").Call(g.outcome(recv().Dot(r.Ctx), r.ScanErr)),
							jen.Id(r.DoneErr).Op("!=").Nil(),
						).Block(jen.Return(doneOut...)),
					).Else().If(recv().Dot(r.Ticket).Dot("Probe").Call()).Block(
						append([]jen.Code{jen.Comment("a half-open probe's first message answers it: a stream that stays open would hold its claim")},
							done(jen.Qual(circuitPath, "Success"))...)...,
					),
					jen.Return(out...),
				)
			case model.IsErrMethod(fn):
				// A cursor's query error comes at Err, with no Scan: an
				// error there settles the call.
				e := jen.Id(r.ScanErr)
				body = append(body,
					e.Clone().Op(":=").Add(call),
					jen.If(e.Clone().Op("!=").Nil()).Block(
						jen.If(
							jen.Id(r.DoneErr).Op(":=").Add(recv()).Dot(r.Ticket).Dot("Done").Call(g.outcome(recv().Dot(r.Ctx), r.ScanErr)),
							jen.Id(r.DoneErr).Op("!=").Nil(),
						).Block(jen.Return(jen.Id(r.DoneErr))),
					),
					jen.Return(e.Clone()),
				)
			case model.IsNextMethod(fn) && r.Cursor():
				// A cursor's end settles the call, as an iterator's does:
				// with the outcome of its Err, nil for a clean end.
				more, e := jen.Id("more"), jen.Id(r.ScanErr)
				body = append(body,
					more.Clone().Op(":=").Add(call),
					jen.If(jen.Op("!").Add(more.Clone())).Block(
						e.Clone().Op(":=").Add(recv()).Dot(r.Next).Dot("Err").Call(),
						jen.Id("_").Op("=").Add(recv()).Dot(r.Ticket).Dot("Done").Call(g.outcome(recv().Dot(r.Ctx), r.ScanErr)),
					),
					jen.Return(more.Clone()),
				)
			case isCloseMethod(fn):
				// Closing a row that nothing settled (no row scanned)
				// settles it as Ignored: a half-open probe gives its claim
				// back now, not when its lease expires. A cursor closed
				// before its end (pgx.CollectOneRow) is settled by the Err
				// next reports once closed: pgx finishes reading, and
				// reports the query's error, in Close.
				settle := done(jen.Qual(circuitPath, "Ignored"))
				if r.Cursor() {
					// end names Err's error; a Close() error keeps its own
					// in ScanErr, and returns it.
					end := r.ScanErr
					if len(results) > 0 {
						end = r.DoneErr
					}
					settle = []jen.Code{
						jen.Id(end).Op(":=").Add(recv()).Dot(r.Next).Dot("Err").Call(),
						jen.Id("_").Op("=").Add(recv()).Dot(r.Ticket).Dot("Done").Call(g.outcome(recv().Dot(r.Ctx), end)),
					}
				}
				if len(results) == 0 {
					body = append(append(body, call), settle...)
				} else {
					e := jen.Id(r.ScanErr)
					body = append(append(body, e.Clone().Op(":=").Add(call)), settle...)
					body = append(body, jen.Return(e.Clone()))
				}
			case len(results) == 0:
				body = append(body, call)
			default:
				body = append(body, jen.Return(call))
			}
			decl.Block(body...)
			continue
		}
		e := jen.Id(r.ScanErr)
		settle := jen.If(
			jen.Id(r.DoneErr).Op(":=").Add(recv()).Dot(r.Ticket).Dot("Done").Call(g.outcome(recv().Dot(r.Ctx), r.ScanErr)),
			jen.Id(r.DoneErr).Op("!=").Nil(),
		).Block(jen.Return(jen.Id(r.DoneErr)))
		if r.Cursor() {
			// A cursor's scanned row shows no success yet: its end does.
			settle = jen.If(e.Clone().Op("!=").Nil()).Block(settle)
		}
		decl.Block(
			jen.If(recv().Dot(r.Err).Op("!=").Nil()).Block(jen.Return(recv().Dot(r.Err))),
			e.Clone().Op(":=").Add(call),
			settle,
			jen.Return(e.Clone()),
		)
	}
}

// isRecvMethod reports whether fn is a stream's Recv() (T, error).
func isRecvMethod(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	return fn.Name() == "Recv" && sig.Params().Len() == 0 && sig.Results().Len() == 2 &&
		types.Identical(sig.Results().At(1).Type(), types.Universe.Lookup("error").Type())
}

// isRecvMsgMethod reports whether fn is a gRPC stream's RecvMsg(m any)
// error, which reads the stream as Recv does.
func isRecvMsgMethod(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	return fn.Name() == "RecvMsg" && sig.Params().Len() == 1 && sig.Results().Len() == 1 &&
		types.Identical(sig.Results().At(0).Type(), types.Universe.Lookup("error").Type())
}

// isCloseMethod reports whether fn is Close() or Close() error.
func isCloseMethod(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	return fn.Name() == "Close" && sig.Params().Len() == 0 && (sig.Results().Len() == 0 ||
		sig.Results().Len() == 1 && types.Identical(sig.Results().At(0).Type(), types.Universe.Lookup("error").Type()))
}

// rejected renders the statements of a rejected row's method of
// signature sig other than Scan: zero values, and the rejection for an
// error last.
func rejected(r *model.RowType, sig *types.Signature) []jen.Code {
	res := sig.Results()
	if res.Len() == 0 {
		return []jen.Code{jen.Return()}
	}
	taken := map[string]bool{r.Recv: true}
	for _, p := range r.Params {
		taken[p] = true
	}
	var stmts, values []jen.Code
	for i := range res.Len() {
		t := res.At(i).Type()
		if i == res.Len()-1 && types.Identical(t, types.Universe.Lookup("error").Type()) {
			values = append(values, jen.Id(r.Recv).Dot(r.Err))
			continue
		}
		name := fmt.Sprintf("zero%d", i)
		for taken[name] {
			name += "_"
		}
		stmts = append(stmts, jen.Var().Id(name).Add(typeCode(t)))
		values = append(values, jen.Id(name))
	}
	return append(stmts, jen.Return(values...))
}

// sqlRow renders the helper that makes a *database/sql.Row carrying an
// error, for a rejected call of a method returning one: the row of a query
// on a database whose connector fails with that error.
func sqlRow(f *jen.File, h *model.SQLRowHelper) {
	doc(f, "%s returns a *sql.Row whose Err and Scan return err, the rejection of a call that was not sent: database/sql makes such a row for a query whose connection fails.", h.Func)
	f.Func().Id(h.Func).Params(jen.Id("err").Error()).Op("*").Qual("database/sql", "Row").Block(
		jen.Id("db").Op(":=").Qual("database/sql", "OpenDB").Call(jen.Id(h.Connector).Values(jen.Id("err"))),
		jen.Defer().Id("db").Dot("Close").Call(),
		jen.Return(jen.Id("db").Dot("QueryRowContext").Call(jen.Qual("context", "Background").Call(), jen.Lit(""))),
	)
	f.Line()
	doc(f, "%s is a driver.Connector, and its driver, whose connections fail with err.", h.Connector)
	f.Type().Id(h.Connector).Struct(jen.Id("err").Error())
	f.Line()
	f.Func().Params(jen.Id("c").Id(h.Connector)).Id("Connect").Params(jen.Qual("context", "Context")).Params(jen.Qual("database/sql/driver", "Conn"), jen.Error()).Block(
		jen.Return(jen.Nil(), jen.Id("c").Dot("err")),
	)
	f.Line()
	f.Func().Params(jen.Id("c").Id(h.Connector)).Id("Open").Params(jen.String()).Params(jen.Qual("database/sql/driver", "Conn"), jen.Error()).Block(
		jen.Return(jen.Nil(), jen.Id("c").Dot("err")),
	)
	f.Line()
	f.Func().Params(jen.Id("c").Id(h.Connector)).Id("Driver").Params().Qual("database/sql/driver", "Driver").Block(jen.Return(jen.Id("c")))
}
