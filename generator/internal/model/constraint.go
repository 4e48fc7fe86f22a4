package model

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"slices"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/spec"
)

// fileConstraint returns what a file of the package needs to be built: its
// //go:build line (or its // +build lines), its name's GOOS and GOARCH
// suffix, and cgo when it imports "C"; nil when it is always built.
func fileConstraint(fset *token.FileSet, f *ast.File) constraint.Expr {
	var exprs []constraint.Expr
	var plus []constraint.Expr
	var build constraint.Expr
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			switch {
			case constraint.IsGoBuild(c.Text):
				if x, err := constraint.Parse(c.Text); err == nil {
					build = x
				}
			case constraint.IsPlusBuild(c.Text):
				if x, err := constraint.Parse(c.Text); err == nil {
					plus = append(plus, x)
				}
			}
		}
	}
	switch {
	case build != nil:
		exprs = append(exprs, build)
	default:
		exprs = append(exprs, plus...)
	}
	exprs = append(exprs, nameConstraint(fset.Position(f.Package).Filename)...)
	for _, is := range f.Imports {
		if is.Path.Value == `"C"` {
			exprs = append(exprs, &constraint.TagExpr{Tag: "cgo"})
			break
		}
	}
	return and(exprs)
}

// nameConstraint returns the tags a file's name constrains it to.
func nameConstraint(path string) []constraint.Expr {
	var out []constraint.Expr
	for _, tag := range spec.NameTags(path) {
		out = append(out, &constraint.TagExpr{Tag: tag})
	}
	return out
}

// and returns the conjunction of exprs, each once, or nil for none.
func and(exprs []constraint.Expr) constraint.Expr {
	var out constraint.Expr
	seen := map[string]bool{}
	for _, x := range exprs {
		if seen[x.String()] {
			continue
		}
		seen[x.String()] = true
		if out == nil {
			out = x
		} else {
			out = &constraint.AndExpr{X: out, Y: x}
		}
	}
	return out
}

// constraint returns the build constraint of the output: the conjunction
// of the constraints of the files that declare a guarded interface or one
// of its methods (an embedded interface's, of this package or another), so
// that the output is built exactly where everything it wraps is; "" when
// those files are always built.
func (b *builder) constraint() string {
	var names []string
	for _, p := range b.declPos {
		if name := b.prog.Fset.Position(p).Filename; name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	var exprs []constraint.Expr
	for _, name := range names {
		if x := b.declConstraint(name); x != nil {
			exprs = append(exprs, x)
		}
	}
	slices.SortFunc(exprs, func(a, b constraint.Expr) int { return strings.Compare(a.String(), b.String()) })
	if x := and(exprs); x != nil {
		return x.String()
	}
	return ""
}

// declConstraint returns the build constraint of the Go file at path: one
// of the target's, or another package's, whose header is read from disk;
// a file that cannot be read is constrained by its name only.
func (b *builder) declConstraint(path string) constraint.Expr {
	for _, f := range b.target.Syntax {
		if b.prog.Fset.Position(f.Package).Filename == path {
			return fileConstraint(b.prog.Fset, f)
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
	if err != nil || f == nil {
		return and(nameConstraint(path))
	}
	return fileConstraint(fset, f)
}
