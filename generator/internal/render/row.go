package render

import (
	"fmt"
	"go/types"

	"github.com/dave/jennifer/jen"

	"github.com/circuitgen/circuitgen/generator/internal/model"
)

// row renders the row type the Row method m of w returns: it implements
// the method's result, forwards every method to the row next returned,
// and settles the call in Scan with classify's outcome of Scan's error. A
// rejected row's Scan returns the rejection.
func row(f *jen.File, w *model.Wrapper, m *model.Method, classify *jen.Statement) {
	r := m.Row
	doc(f, "%s is the %s that %s.%s returns: its Scan settles the call on circuit %s, and returns the *circuit.OpenError when the call was rejected.",
		r.Name, types.TypeString(r.Iface, func(p *types.Package) string { return p.Name() }), w.Type, m.Name, m.Field.Circuit.Name)
	f.Type().Id(r.Name).Struct(
		jen.Id(r.Next).Add(typeCode(r.Iface)),
		jen.Id(r.Ctx).Qual("context", "Context"),
		jen.Id(r.Ticket).Op("*").Qual(circuitPath, "Ticket"),
		jen.Id(r.Err).Error(),
	)
	recv := func() *jen.Statement { return jen.Id(r.Recv) }
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
		if fn.Name() != "Scan" {
			// A rejected row has no row of next's: its methods return zero
			// values, and the rejection as an error last.
			body := []jen.Code{jen.If(recv().Dot(r.Err).Op("!=").Nil()).Block(rejected(r, sig)...)}
			if len(results) == 0 {
				body = append(body, call)
			} else {
				body = append(body, jen.Return(call))
			}
			decl.Block(body...)
			continue
		}
		g := guard{m: m, classifier: classify}
		e := jen.Id(r.ScanErr)
		decl.Block(
			jen.If(recv().Dot(r.Err).Op("!=").Nil()).Block(jen.Return(recv().Dot(r.Err))),
			e.Clone().Op(":=").Add(call),
			jen.If(
				jen.Id(r.DoneErr).Op(":=").Add(recv()).Dot(r.Ticket).Dot("Done").Call(g.outcome(recv().Dot(r.Ctx), r.ScanErr)),
				jen.Id(r.DoneErr).Op("!=").Nil(),
			).Block(jen.Return(jen.Id(r.DoneErr))),
			jen.Return(e.Clone()),
		)
	}
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
