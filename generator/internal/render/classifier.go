package render

import (
	"fmt"
	"go/types"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/circuitgen/circuitgen/generator/internal/model"
	"github.com/circuitgen/circuitgen/generator/internal/spec"
)

// classifier renders a generated classifier of file f.
func classifier(f *jen.File, file *model.File, c *model.Classifier) {
	n := c.Locals
	errID := func() *jen.Statement { return jen.Id(n.Err) }
	var params []jen.Code
	if c.Ctx {
		params = append(params, jen.Id(n.Ctx).Qual("context", "Context"))
	}
	if c.Result >= 0 {
		params = append(params, jen.Id(n.Result).Add(typeCode(c.ResultType)))
	}
	params = append(params, errID().Error())
	failure := jen.Return(jen.Qual(circuitPath, "Failure"))
	var onErr []jen.Code
	if c.Ctx {
		onErr = append(onErr, jen.If(jen.Id(n.Ctx).Dot("Err").Call().Op("==").Qual("context", "Canceled")).Block(
			jen.Comment("the caller gave up: not the provider's failure"),
			jen.Return(jen.Qual(circuitPath, "Ignored")),
		))
	}
	targets := n.Targets
	for _, e := range c.Errors {
		if e.Value != nil {
			onErr = append(onErr, jen.If(jen.Qual("errors", "Is").Call(errID(), jen.Qual(e.Value.Pkg().Path(), e.Value.Name()))).Block(failure.Clone()))
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
			jen.List(jen.Id(n.Code), jen.Id(n.OK)).Op(":=").Qual(circuitPath, "ErrorStatus").Call(errID()),
			jen.Id(n.OK).Op("&&").Add(statusCond(n.Code, c.Statuses, true)),
		).Block(failure.Clone()))
	}
	for _, e := range c.StatusErrors {
		// A status circuit.ErrorStatus cannot read: a field, or a
		// method other than StatusCode and HTTPStatusCode.
		v := targets[0]
		targets = targets[1:]
		read := jen.Id(v).Dot(e.Read)
		if e.Method {
			read.Call()
		}
		matched := jen.Qual("errors", "As").Call(errID(), jen.Op("&").Id(v))
		if nilable(e.Type) {
			matched.Op("&&").Id(v).Op("!=").Nil()
		}
		onErr = append(onErr,
			jen.Var().Id(v).Add(typeCode(e.Type)),
			jen.If(matched).Block(
				jen.If(jen.Id(n.Code).Op(":=").Add(read), statusCond(n.Code, c.Statuses, false)).Block(failure.Clone()),
			),
		)
	}
	if len(c.Codes) > 0 {
		codes := make([]jen.Code, len(c.Codes))
		for i, code := range c.Codes {
			codes[i] = jen.Qual(model.GRPCCodesPath, code)
		}
		// Only an error carrying a status counts: status.Code would
		// give Unknown for every other error.
		onErr = append(onErr, jen.If(
			jen.List(jen.Id(n.Status), jen.Id(n.OK)).Op(":=").Qual(model.GRPCStatusPath, "FromError").Call(errID()),
			jen.Id(n.OK),
		).Block(jen.Switch(jen.Id(n.Status).Dot("Code").Call()).Block(
			jen.Case(codes...).Block(failure.Clone()),
		)))
	}
	onErr = append(onErr, jen.Return(jen.Qual(circuitPath, "Ignored")))
	users, verb := "Circuit", "uses"
	if len(c.Circuits) > 1 {
		users, verb = "Circuits", "use"
	}
	canceled := ""
	if c.Ctx {
		canceled = " Ignored for any error of a call whose ctx the caller cancelled;"
	}
	doc(f, "%s returns%s Failure for %s; Ignored for any other error; Success otherwise. %s %s %s it.", c.Name, canceled, describeRule(c, file.PkgPath),
		users, strings.Join(c.Circuits, ", "), verb)
	if c.ErrName != "" {
		// Split in two, the nil check apart, so that the check inlines
		// into each call: a healthy call makes no call to classify
		// (BENCHMARKS.md, where the time goes).
		var args []jen.Code
		if c.Ctx {
			args = append(args, jen.Id(n.Ctx))
		}
		f.Func().Id(c.Name).Params(params...).Qual(circuitPath, "Outcome").Block(
			jen.If(errID().Op("==").Nil()).Block(jen.Return(jen.Qual(circuitPath, "Success"))),
			jen.Return(jen.Id(c.ErrName).Call(append(args, errID())...)),
		)
		f.Line()
		doc(f, "%s classifies a non-nil error for %s.", c.ErrName, c.Name)
		f.Func().Id(c.ErrName).Params(params...).Qual(circuitPath, "Outcome").Block(onErr...)
		return
	}
	body := []jen.Code{jen.If(errID().Op("!=").Nil()).Block(onErr...)}
	read := jen.Id(n.Result).Dot("StatusCode")
	if c.ResultKind == model.StatusMethod {
		read.Call()
	}
	check := jen.If(jen.Id(n.Code).Op(":=").Add(read), statusCond(n.Code, c.Statuses, false)).Block(failure.Clone())
	if nilable(c.ResultType) {
		check = jen.If(jen.Id(n.Result).Op("!=").Nil()).Block(check)
	}
	body = append(body, check, jen.Return(jen.Qual(circuitPath, "Success")))
	f.Func().Id(c.Name).Params(params...).Qual(circuitPath, "Outcome").Block(body...)
}

// describeRule says in words what a classifier selects, naming the types
// of package home unqualified.
func describeRule(c *model.Classifier, home string) string {
	qual := func(p *types.Package) string {
		if p.Path() == home {
			return ""
		}
		return p.Name()
	}
	var parts []string
	for _, e := range c.Errors {
		if e.Value != nil {
			s := e.Value.Name()
			if q := qual(e.Value.Pkg()); q != "" {
				s = q + "." + s
			}
			parts = append(parts, s)
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
		status := "HTTP status " + strings.Join(ss, ", ")
		var reads []string
		for _, e := range c.StatusErrors {
			read := e.Read
			if e.Method {
				read += "()"
			}
			reads = append(reads, fmt.Sprintf("the %s of %s", read, types.TypeString(e.Type, qual)))
		}
		if len(reads) > 0 {
			status += " (read also from " + strings.Join(reads, ", ") + ")"
		}
		parts = append(parts, status)
	}
	if len(c.Codes) > 0 {
		parts = append(parts, "gRPC code "+strings.Join(c.Codes, ", "))
	}
	return strings.Join(parts, ", ")
}

// statusCond renders code's test against the selected statuses.
func statusCond(code string, rs []spec.StatusRange, paren bool) jen.Code {
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

// nilable reports whether a value of type t may be nil.
func nilable(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Interface, *types.Map, *types.Slice, *types.Chan, *types.Signature:
		return true
	}
	return false
}
