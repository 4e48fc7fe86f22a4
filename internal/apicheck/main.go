// Command apicheck prints the exported API of Go packages, one declaration
// a line, as the Go project's api/ files record its own: with -w it writes
// them to api/, one file a package; with -check it fails, printing the
// difference, when a package's API is not what its file records, so that an
// API changes only on purpose (make api, then review the diff).
//
//	go run ./internal/apicheck -check runtime/circuit runtime/filestore ...
//
// Packages are directories relative to the repository root. Only the files
// built for linux/amd64 are read, comments and bodies left out; unexported
// names, fields and methods are not API.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	write := flag.Bool("w", false, "write api/<package>.txt")
	check := flag.Bool("check", false, "fail when api/<package>.txt differs")
	dir := flag.String("api", "api", "the directory of the API files")
	flag.Parse()
	status := 0
	for _, pkg := range flag.Args() {
		lines, err := api(pkg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "apicheck:", err)
			os.Exit(2)
		}
		text := strings.Join(lines, "\n") + "\n"
		file := filepath.Join(*dir, strings.ReplaceAll(pkg, "/", "_")+".txt")
		switch {
		case *write:
			if err := os.MkdirAll(*dir, 0o755); err != nil {
				fmt.Fprintln(os.Stderr, "apicheck:", err)
				os.Exit(2)
			}
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "apicheck:", err)
				os.Exit(2)
			}
		case *check:
			old, err := os.ReadFile(file)
			if err != nil {
				fmt.Fprintf(os.Stderr, "apicheck: %s has no API file (make api writes it): %v\n", pkg, err)
				status = 1
				continue
			}
			if d := diff(strings.Split(strings.TrimSuffix(string(old), "\n"), "\n"), lines); d != "" {
				fmt.Fprintf(os.Stderr, "apicheck: the API of %s is not what %s records (make api, then review):\n%s", pkg, file, d)
				status = 1
			}
		default:
			fmt.Print(text)
		}
	}
	os.Exit(status)
}

// api returns the exported declarations of the package in dir, sorted.
func api(dir string) ([]string, error) {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "linux", "amd64", false
	bp, err := ctx.ImportDir(dir, 0)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var lines []string
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		unname(f)
		for _, d := range f.Decls {
			lines = append(lines, decl(fset, d)...)
		}
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// decl returns the exported API lines of d.
func decl(fset *token.FileSet, d ast.Decl) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() || d.Recv != nil && !exportedRecv(d.Recv) {
			return nil
		}
		return []string{node(fset, &ast.FuncDecl{Recv: d.Recv, Name: d.Name, Type: d.Type})}
	case *ast.GenDecl:
		var out []string
		var typ ast.Expr      // a const group's type, carried to the specs that repeat it
		var values []ast.Expr // and its values
		for i, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					t := *s
					t.Doc, t.Comment, t.Type = nil, nil, exportedOnly(s.Type)
					out = append(out, "type "+node(fset, &t))
				}
			case *ast.ValueSpec:
				if d.Tok == token.CONST && (s.Type != nil || len(s.Values) > 0) {
					typ, values = s.Type, s.Values
				}
				t, vs := s.Type, s.Values
				if d.Tok == token.CONST {
					t, vs = typ, values
				}
				for j, n := range s.Names {
					if !n.IsExported() {
						continue
					}
					line := d.Tok.String() + " " + n.Name
					if t != nil {
						line += " " + node(fset, t)
					}
					if j < len(vs) {
						line += " = " + node(fset, vs[j])
						if d.Tok == token.CONST && usesIota(vs[j]) {
							line += fmt.Sprintf(" (iota = %d)", i)
						}
					}
					out = append(out, line)
				}
			}
		}
		return out
	}
	return nil
}

// usesIota reports whether the constant expression e refers to iota, so
// that its value depends on its place in its group.
func usesIota(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == "iota" {
			found = true
		}
		return !found
	})
	return found
}

// unname leaves the names of receivers, parameters and results out of every
// function and method of f, and of every function type in it: they are not
// API, and renaming one changes nothing for a caller. A field list's types
// are repeated, one a name, so that (a, b int) reads (int, int).
func unname(f *ast.File) {
	strip := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		var list []*ast.Field
		for _, fd := range fl.List {
			for range max(len(fd.Names), 1) {
				list = append(list, &ast.Field{Type: fd.Type})
			}
		}
		fl.List = list
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			strip(n.Recv)
		case *ast.FuncType:
			strip(n.Params)
			strip(n.Results)
		}
		return true
	})
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(fl *ast.FieldList) bool {
	t := fl.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// exportedOnly returns t with the unexported fields of a struct and the
// unexported methods of an interface left out, and no comments.
func exportedOnly(t ast.Expr) ast.Expr {
	keep := func(fl *ast.FieldList) *ast.FieldList {
		out := &ast.FieldList{}
		for _, f := range fl.List {
			g := *f
			g.Doc, g.Comment, g.Tag = nil, nil, f.Tag
			if len(f.Names) == 0 { // embedded
				out.List = append(out.List, &g)
				continue
			}
			g.Names = nil
			for _, n := range f.Names {
				if n.IsExported() {
					g.Names = append(g.Names, n)
				}
			}
			if len(g.Names) > 0 {
				out.List = append(out.List, &g)
			}
		}
		return out
	}
	switch t := t.(type) {
	case *ast.StructType:
		return &ast.StructType{Fields: keep(t.Fields)}
	case *ast.InterfaceType:
		return &ast.InterfaceType{Methods: keep(t.Methods)}
	}
	return t
}

// node prints n on one line.
func node(fset *token.FileSet, n any) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, fset, n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// diff returns the lines of old missing from new (-) and of new missing
// from old (+); both are sorted.
func diff(old, new []string) string {
	var b strings.Builder
	for _, l := range old {
		if _, found := slices.BinarySearch(new, l); !found {
			fmt.Fprintf(&b, "-%s\n", l)
		}
	}
	for _, l := range new {
		if _, found := slices.BinarySearch(old, l); !found {
			fmt.Fprintf(&b, "+%s\n", l)
		}
	}
	return b.String()
}
