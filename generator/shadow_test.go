package generator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/passes/shadow"
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
// with files replaced as overlay says. The analyzer's command is built from
// the module this package requires (its Analyzer below).
func shadowVet(t *testing.T, dir string, overlay map[string]string, dirs []string) {
	t.Helper()
	tool := filepath.Join(t.TempDir(), shadow.Analyzer.Name)
	build := exec.Command("go", "build", "-o", tool, "golang.org/x/tools/go/analysis/passes/shadow/cmd/shadow")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the shadow analyzer: %v\n%s", err, out)
	}
	if _, err := os.Stat(tool); err != nil {
		t.Fatal(err)
	}
	vetOverlay(t, dir, overlay, dirs, "-vettool="+tool, "-strict")
}
