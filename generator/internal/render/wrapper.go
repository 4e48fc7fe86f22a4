package render

import (
	"bytes"
	"fmt"
	"go/types"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/circuitgen/circuitgen/generator/internal/model"
)

// wrapper renders the wrapper type of w and its constructors.
func wrapper(f *jen.File, w *model.Wrapper) {
	tparams := make([]jen.Code, len(w.TypeParams))
	targs := make([]jen.Code, len(w.TypeParams))
	for i, tp := range w.TypeParams {
		tparams[i] = jen.Id(tp.Obj().Name()).Add(constraint(tp.Constraint()))
		targs[i] = jen.Id(tp.Obj().Name())
	}
	iface := func() *jen.Statement { return jen.Qual(w.PkgPath, w.Interface).Types(targs...) }
	self := func() *jen.Statement { return jen.Id(w.Type).Types(targs...) }
	circuitType := func() *jen.Statement { return jen.Op("*").Qual(circuitPath, "Circuit") }

	f.Line()
	doc(f, "%s is %s %s that runs every call of a guarded method through a circuit breaker. While a method's circuit is open, the method returns a *circuit.OpenError without calling next, or the answer of its fallback (%s):", w.Type, article(w.Interface), w.Interface, w.WithFallback)
	f.Comment("")
	for _, line := range usage(w) {
		f.Comment("\t" + line)
	}
	fields := []jen.Code{jen.Id(w.Next).Add(iface())}
	for _, fd := range w.Fields {
		fields = append(fields, jen.Id(fd.Name).Add(circuitType()).Comment(fd.Circuit.Name))
	}
	fields = append(fields, jen.Id(w.Fallback).Add(iface()).Comment("nil: no fallback"))
	f.Type().Id(w.Type).Types(tparams...).Struct(fields...)

	option := func() *jen.Statement { return jen.Id(w.Option).Types(targs...) }
	f.Line()
	doc(f, "%s configures a %s made by %s or %s.", w.Option, w.Type, w.Constructor, w.With)
	f.Type().Id(w.Option).Types(tparams...).Func().Params(jen.Op("*").Add(self()))

	f.Line()
	doc(f, "%s answers a call of a guarded method that the circuit rejects from f: f's method runs with the same arguments, its context marked with the *circuit.OpenError (circuit.FromFallback), and its results are returned. A method with fallback=failed also falls back when the call ran and its error counted as a failure; one with fallback=never never does. The rejection is still observed; a caller tells the answer came from f by f's own results.", w.WithFallback)
	f.Func().Id(w.WithFallback).Types(tparams...).Params(jen.Id(w.FallbackParam).Add(iface())).Add(option()).Block(
		jen.Return(jen.Func().Params(jen.Id(w.OptionRecv).Op("*").Add(self())).Block(
			jen.Id(w.OptionRecv).Dot(w.Fallback).Op("=").Id(w.FallbackParam),
		)),
	)

	f.Line()
	doc(f, "%s returns a %s that calls next through the circuits of b, with the policies circuitgen was given.", w.Constructor, w.Type)
	binds := []jen.Code{jen.Id(w.NewNext)}
	for _, fd := range w.Fields {
		binds = append(binds, jen.Id(w.NewBreaker).Dot("Circuit").Call(jen.Lit(fd.Circuit.Name), jen.Id(fd.Policy.Var)))
	}
	binds = append(binds, jen.Id(w.NewOpts).Op("..."))
	f.Func().Id(w.Constructor).Types(tparams...).Params(
		jen.Id(w.NewNext).Add(iface()), jen.Id(w.NewBreaker).Op("*").Qual(circuitPath, "Breaker"), jen.Id(w.NewOpts).Op("...").Add(option()),
	).Op("*").Add(self()).Block(
		jen.Return(jen.Id(w.With).Types(targs...).CallFunc(func(g *jen.Group) {
			for _, b := range binds {
				g.Line().Add(b)
			}
			g.Line()
		})),
	)

	f.Line()
	var uses []string
	for _, fd := range w.Fields {
		uses = append(uses, fmt.Sprintf("%s for circuit %s", fd.Param, fd.Circuit.Name))
	}
	doc(f, "%s returns a %s that calls next through circuits the caller prepared with Breaker.Circuit: %s.", w.With, w.Type, strings.Join(uses, ", "))
	params := []jen.Code{jen.Id(w.WithNext).Add(iface())}
	values := []jen.Code{jen.Id(w.Next).Op(":").Id(w.WithNext)}
	for i, fd := range w.Fields {
		p := jen.Id(fd.Param)
		if i == len(w.Fields)-1 {
			p.Add(circuitType())
		}
		params = append(params, p)
		values = append(values, jen.Id(fd.Name).Op(":").Id(fd.Param))
	}
	params = append(params, jen.Id(w.WithOpts).Op("...").Add(option()))
	recv := jen.Id(w.WithRecv)
	f.Func().Id(w.With).Types(tparams...).Params(params...).Op("*").Add(self()).Block(
		recv.Clone().Op(":=").Op("&").Add(self()).Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, values...),
		jen.For(jen.List(jen.Id("_"), jen.Id(w.WithOpt)).Op(":=").Range().Id(w.WithOpts)).Block(jen.Id(w.WithOpt).Call(recv.Clone())),
		jen.Return(recv.Clone()),
	)

}

// Assertions renders the test file beside f's output that asserts, for each
// wrapper, that it implements its interface. The assertion is checked
// when the package's tests compile (go vet, go test), not when the package
// builds: a stale output, its interface grown a method, never stops a tool
// that loads the package (another generator, such as moq, run first).
func Assertions(f *model.File) ([]byte, error) {
	out := newFile(f)
	for _, w := range f.Wrappers {
		tparams := make([]jen.Code, len(w.TypeParams))
		targs := make([]jen.Code, len(w.TypeParams))
		for i, tp := range w.TypeParams {
			tparams[i] = jen.Id(tp.Obj().Name()).Add(constraint(tp.Constraint()))
			targs[i] = jen.Id(tp.Obj().Name())
		}
		iface := jen.Qual(w.PkgPath, w.Interface).Types(targs...)
		out.Line()
		if len(w.TypeParams) == 0 {
			out.Comment(w.Type + " implements " + w.Interface + ".")
			out.Var().Id("_").Add(iface).Op("=").Parens(jen.Op("*").Id(w.Type)).Parens(jen.Nil())
			continue
		}
		out.Comment(w.Type + " implements " + w.Interface + " for every instantiation.")
		out.Func().Id("_").Types(tparams...).Params().Block(
			jen.Var().Id("_").Add(iface).Op("=").Parens(jen.Op("*").Id(w.Type).Types(targs...)).Parens(jen.Nil()),
		)
	}
	var buf bytes.Buffer
	if err := out.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", f.TestPath, err)
	}
	return withConstraint(groupImports(buf.Bytes()), f.Constraint), nil
}

// argNames returns the names of m's parameters for an example call, …
// for an unnamed one.
func argNames(m *model.Method) []string {
	args := make([]string, len(m.Params))
	for i, p := range m.Params {
		args[i] = p.Declared
		if args[i] == "" || args[i] == "_" {
			args[i] = "…"
		}
	}
	return args
}

// usage returns the lines of the wrapper's usage example.
func usage(w *model.Wrapper) []string {
	var first, built *model.Method
	for _, m := range w.Methods {
		switch {
		case m.Skip:
		case m.Shape == model.Builder:
			if built == nil {
				built = m
			}
		case first == nil:
			first = m
		}
	}
	if first == nil {
		// Only builders: the example shows one coming back guarded.
		return []string{
			fmt.Sprintf("client := %s(next, b) // b: the application's *circuit.Breaker", w.Constructor),
			fmt.Sprintf("built := client.%s(%s) // a guarded %s: its terminal call runs through its circuit", built.Name, strings.Join(argNames(built), ", "), built.Returns[0].Wrapper.Interface),
		}
	}
	call := fmt.Sprintf("client.%s(%s)", first.Name, strings.Join(argNames(first), ", "))
	var results []string
	switch {
	case first.Shape == model.Carrier, first.Shape == model.Reported:
		call += "." + first.ErrMethod + "()"
	case first.Shape == model.Row && len(first.Results) == 1:
		call += ".Scan(…)"
	case first.Shape == model.Seq && len(first.Results) == 1:
	default:
		for range len(first.Results) - 1 {
			results = append(results, "_")
		}
	}
	lines := []string{fmt.Sprintf("client := %s(next, b) // b: the application's *circuit.Breaker", w.Constructor)}
	check := []string{
		"var open *circuit.OpenError",
		"if errors.As(err, &open) {",
		fmt.Sprintf("\t// circuit %s is open: retry after open.RetryAfter()", first.Field.Circuit.Name),
		"}",
	}
	if first.Shape == model.Seq && len(first.Results) == 1 {
		lines = append(lines, fmt.Sprintf("for _, err := range %s {", call))
		for _, l := range check {
			lines = append(lines, "\t"+l)
		}
		return append(lines, "}")
	}
	lhs := strings.Join(append(results, "err"), ", ")
	lines = append(lines, fmt.Sprintf("%s := %s", lhs, call))
	return append(lines, check...)
}

// constraint renders a type parameter's constraint, unwrapping the
// implicit interface of a constraint such as ~int | ~string.
func constraint(t types.Type) jen.Code {
	if it, ok := t.(*types.Interface); ok && it.IsImplicit() && it.NumEmbeddeds() == 1 {
		return typeCode(it.EmbeddedType(0))
	}
	return typeCode(t)
}

// article returns the indefinite article of a type's name as it is read:
// "an" before a vowel sound (an API, an Invoicer, an HTTPClient, an
// SMTPSender), "a" otherwise (a BillingAPI, a URLFetcher, a UserStore).
func article(name string) string {
	if name == "" {
		return "a"
	}
	initialism := len(name) > 1 && 'A' <= name[1] && name[1] <= 'Z'
	switch first := name[0] | 0x20; { // lower case
	case first == 'u' && (initialism || hasAnyPrefix(strings.ToLower(name), "uni", "use", "usa", "uti")):
		return "a" // read "you"
	case strings.IndexByte("aeiou", first) >= 0:
		return "an"
	case initialism && strings.IndexByte("fhlmnrsx", first) >= 0:
		return "an" // read "eff", "aitch", "el", …
	}
	return "a"
}

// hasAnyPrefix reports whether s starts with one of prefixes.
func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
