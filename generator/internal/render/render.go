// Package render writes the model of one output file as gofmt'd Go source.
// It chooses nothing: every identifier comes from the model.
//
// The declarations of a file come in this order:
//
//  1. the header, the package clause and the imports;
//  2. the reference to the runtime's version marker, so that a runtime
//     that does not support this generator's files fails to compile with
//     a message that says what to update;
//  3. the package-level policies, in one var block, in the order of first
//     use;
//  4. each wrapper, in the model's order: its type, its two constructors,
//     then its methods in the interface's method order, each Row method's
//     row type after it;
//  5. the generated classifiers, in the order of first use, then the
//     helper making a *sql.Row that carries a rejection, when a method
//     needs it.
//
// The assertion that each wrapper implements its interface is in a test
// file beside it (Assertions).
package render

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/circuitgen/circuitgen/generator/internal/load"
	"github.com/circuitgen/circuitgen/generator/internal/model"
)

const circuitPath = model.CircuitPath

// File renders f as a gofmt'd Go file.
func File(f *model.File) ([]byte, error) {
	out := newFile(f)
	versionMarker(out)
	if len(f.Policies) > 0 {
		out.Var().DefsFunc(func(g *jen.Group) {
			for _, p := range f.Policies {
				g.Id(p.Var).Op("=").Add(policy(p))
			}
		})
	}
	for _, w := range f.Wrappers {
		wrapper(out, w)
		for _, m := range w.Methods {
			out.Line()
			method(out, f, w, m)
		}
	}
	for _, c := range f.Classifiers {
		out.Line()
		classifier(out, f, c)
	}
	if f.SQLRow != nil {
		out.Line()
		sqlRow(out, f.SQLRow)
	}
	var buf bytes.Buffer
	if err := out.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", f.Path, err)
	}
	return withConstraint(groupImports(buf.Bytes()), f.Constraint), nil
}

// withConstraint puts the //go:build line of constraint after the header
// of the rendered file src, when there is one.
func withConstraint(src []byte, constraint string) []byte {
	if constraint == "" {
		return src
	}
	header := []byte(load.Header + "\n\n")
	if !bytes.HasPrefix(src, header) {
		return src
	}
	out := append([]byte{}, header...)
	out = append(out, "//go:build "+constraint+"\n\n"...)
	return append(out, src[len(header):]...)
}

// newFile returns a jennifer file of f's package with our header and the
// import names the model chose.
func newFile(f *model.File) *jen.File {
	out := jen.NewFilePathName(f.PkgPath, f.PkgName)
	out.HeaderComment(load.Header)
	for _, imp := range f.Imports {
		if imp.Alias {
			out.ImportAlias(imp.Path, imp.Name)
		} else {
			out.ImportName(imp.Path, imp.Name)
		}
	}
	return out
}

// withResults adds a function's results to its declaration: none, one,
// or several in parentheses.
func withResults(decl *jen.Statement, results []jen.Code) *jen.Statement {
	switch len(results) {
	case 0:
	case 1:
		decl.Add(results[0])
	default:
		decl.Params(results...)
	}
	return decl
}

// forward renders the body of a method that calls call and returns what
// it returns.
func forward(decl *jen.Statement, call *jen.Statement, results int) {
	if results == 0 {
		decl.Block(call)
	} else {
		decl.Block(jen.Return(call))
	}
}

// RuntimeVersion is the version of generated files the output needs the
// runtime to support: circuit.SupportPackageIsVersionN.
const RuntimeVersion = 3

// versionMarker renders the reference to the runtime's version marker.
func versionMarker(f *jen.File) {
	doc(f, "This file needs a runtime/circuit that supports generated files of version %d. If the line below does not compile, the runtime and the generator differ: update %s or run the circuitgen that matches it.",
		RuntimeVersion, "github.com/circuitgen/circuitgen")
	f.Const().Id("_").Op("=").Qual(circuitPath, fmt.Sprintf("SupportPackageIsVersion%d", RuntimeVersion))
}

// policy renders a policy literal.
func policy(p *model.Policy) jen.Code {
	values := make([]jen.Code, 0, len(p.Fields))
	for _, f := range p.Fields {
		var v jen.Code
		switch x := f.Value.(type) {
		case time.Duration:
			v = duration(x)
		default:
			v = jen.Lit(x)
		}
		values = append(values, jen.Id(f.Name).Op(":").Add(v))
	}
	return jen.Qual(circuitPath, "Policy").Values(values...)
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
