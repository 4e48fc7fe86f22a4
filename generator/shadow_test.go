package generator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/analysis/passes/shadow"
	"golang.org/x/tools/go/packages"
)

// TestGoldenDeclaresNoNameTwice checks that no identifier a golden output
// declares inside a function (a parameter, a result, a local, a function
// literal's parameter) is declared again in a scope within, which go vet's
// shadow analyzer does not report for function literals' parameters.
func TestGoldenDeclaresNoNameTwice(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join(goldenDir, "*", "*.go.golden"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden outputs: %v", err)
	}
	for _, g := range goldens {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, g, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			var outer []string
			for _, fl := range []*ast.FieldList{fd.Recv, fd.Type.Params, fd.Type.Results} {
				outer = append(outer, fieldNames(fl)...)
			}
			redeclared(fd.Body, outer, func(id *ast.Ident) {
				t.Errorf("%s: %s is declared again in a scope within %s", fset.Position(id.Pos()), id.Name, fd.Name.Name)
			})
		}
	}
}

// fieldNames returns the names a field list declares.
func fieldNames(fl *ast.FieldList) []string {
	var names []string
	if fl != nil {
		for _, f := range fl.List {
			for _, n := range f.Names {
				names = append(names, n.Name)
			}
		}
	}
	return names
}

// redeclared calls report for each identifier declared within n whose name
// is in outer or declared in an enclosing block within n.
func redeclared(n ast.Node, outer []string, report func(*ast.Ident)) {
	declare := func(scope map[string]bool, id *ast.Ident) {
		if id.Name == "_" {
			return
		}
		if scope[id.Name] {
			report(id)
		}
		scope[id.Name] = true
	}
	var walk func(n ast.Node, scope map[string]bool)
	within := func(scope map[string]bool) map[string]bool {
		inner := map[string]bool{}
		for k := range scope {
			inner[k] = true
		}
		return inner
	}
	walk = func(n ast.Node, scope map[string]bool) {
		ast.Inspect(n, func(c ast.Node) bool {
			switch c := c.(type) {
			case *ast.FuncLit:
				inner := within(scope)
				for _, fl := range []*ast.FieldList{c.Type.Params, c.Type.Results} {
					if fl != nil {
						for _, f := range fl.List {
							for _, id := range f.Names {
								declare(inner, id)
							}
						}
					}
				}
				walk(c.Body, inner)
				return false
			case *ast.BlockStmt:
				if c != n {
					walk(c, within(scope))
					return false
				}
			case *ast.IfStmt, *ast.SwitchStmt, *ast.ForStmt, *ast.RangeStmt, *ast.TypeSwitchStmt:
				if c != n {
					walk(c, within(scope))
					return false
				}
			case *ast.AssignStmt:
				if c.Tok == token.DEFINE {
					for _, l := range c.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							declare(scope, id)
						}
					}
				}
			case *ast.ValueSpec:
				for _, id := range c.Names {
					declare(scope, id)
				}
			}
			return true
		})
	}
	scope := map[string]bool{}
	for _, o := range outer {
		scope[o] = true
	}
	walk(n, scope)
}

// shadowVet runs go vet's shadow analyzer, strict, on dirs seen from dir,
// with files replaced as overlay says. It runs in this process, on packages
// loaded with go/packages: go vet -vettool would run the analyzer on every
// dependency too, the standard library's included (225 s of a cold run of
// this package's tests, 3 s warm).
func shadowVet(t *testing.T, dir string, overlay map[string]string, dirs []string) {
	t.Helper()
	ov := map[string][]byte{}
	for file, golden := range overlay {
		data, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		ov[file] = data
	}
	if err := shadow.Analyzer.Flags.Set("strict", "true"); err != nil {
		t.Fatal(err)
	}
	mode := packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports |
		packages.NeedTypes | packages.NeedTypesSizes | packages.NeedSyntax | packages.NeedTypesInfo
	pkgs, err := packages.Load(&packages.Config{Mode: mode, Dir: dir, Overlay: ov, Tests: true}, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < len(dirs) {
		t.Fatalf("loaded %d packages of %d directories", len(pkgs), len(dirs))
	}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			t.Errorf("load %s: %v", p.PkgPath, e)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{shadow.Analyzer}, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{} // a package and its test variant share files
	for act := range graph.All() {
		if act.Err != nil {
			t.Errorf("shadow of %s: %v", act.Package.PkgPath, act.Err)
		}
		for _, d := range act.Diagnostics {
			msg := act.Package.Fset.Position(d.Pos).String() + ": " + d.Message
			if !seen[msg] {
				seen[msg] = true
				t.Error(msg)
			}
		}
	}
}
