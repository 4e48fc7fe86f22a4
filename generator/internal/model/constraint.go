package model

import (
	"go/ast"
	"go/build/constraint"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
)

// knownOS and knownArch are the operating systems and architectures a Go
// file name's suffix constrains it to (go/build's lists): x_linux.go builds
// only for linux, x_windows_arm64.go only for windows on arm64.
var (
	knownOS = []string{"aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js",
		"linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos"}
	knownArch = []string{"386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips",
		"mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le", "riscv",
		"riscv64", "s390", "s390x", "sparc", "sparc64", "wasm"}
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

// nameConstraint returns the tags a file's name constrains it to, as
// go/build reads them: the last one or two elements after an underscore,
// not counting _test.
func nameConstraint(path string) []constraint.Expr {
	name, _, _ := strings.Cut(filepath.Base(path), ".")
	i := strings.Index(name, "_")
	if i < 0 {
		return nil
	}
	l := strings.Split(name[i:], "_")
	if n := len(l); n > 0 && l[n-1] == "test" {
		l = l[:n-1]
	}
	n := len(l)
	switch {
	case n >= 2 && slices.Contains(knownOS, l[n-2]) && slices.Contains(knownArch, l[n-1]):
		return []constraint.Expr{&constraint.TagExpr{Tag: l[n-2]}, &constraint.TagExpr{Tag: l[n-1]}}
	case n >= 1 && (slices.Contains(knownOS, l[n-1]) || slices.Contains(knownArch, l[n-1])):
		return []constraint.Expr{&constraint.TagExpr{Tag: l[n-1]}}
	}
	return nil
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
// of the constraints of the target's files that declare a guarded
// interface or one of its methods (an embedded interface of the package),
// so that the output is built exactly where everything it wraps is;
// "" when those files are always built.
func (b *builder) constraint() string {
	var exprs []constraint.Expr
	for _, f := range b.target.Syntax {
		used := slices.ContainsFunc(b.declPos, func(p token.Pos) bool { return f.FileStart <= p && p <= f.FileEnd })
		if !used {
			continue
		}
		if x := fileConstraint(b.prog.Fset, f); x != nil {
			exprs = append(exprs, x)
		}
	}
	slices.SortFunc(exprs, func(a, b constraint.Expr) int { return strings.Compare(a.String(), b.String()) })
	if x := and(exprs); x != nil {
		return x.String()
	}
	return ""
}
