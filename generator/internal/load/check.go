package load

import (
	"errors"
	"fmt"
	"go/ast"
	goimporter "go/importer"
	"go/types"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// TypeCheck reads from export data the packages the target packages
// import and those at paths (the packages the specs name), with one go list
// run, then type-checks the target packages from source. idents are the
// identifiers of the target packages the specs name, so that a file of
// another generator declaring one is read.
func (p *Program) TypeCheck(paths, idents []string) error {
	isRoot := map[string]*Package{}
	for _, r := range p.Roots {
		if len(r.GoFiles) > 0 {
			isRoot[r.PkgPath] = r
		}
	}
	var need []string
	addNeed := func(path string) {
		if path != "" && path != "C" && path != "unsafe" && isRoot[path] == nil && !slices.Contains(need, path) {
			need = append(need, path)
		}
	}
	for _, r := range p.Roots {
		r.keepGenerated(idents)
		for _, f := range r.Syntax {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				addNeed(path)
			}
		}
	}
	for _, path := range paths {
		if valid(path) {
			addNeed(path)
		} else if isRoot[path] == nil {
			p.failed[path] = "malformed import path"
		}
	}
	exports, err := p.exports(need)
	if err != nil {
		return err
	}
	aux, err := p.fromSource(exports, isRoot)
	if err != nil {
		return err
	}
	imp := &importer{p: p, exports: exports, roots: map[string]*types.Package{}}
	imp.gc = goimporter.ForCompiler(p.Fset, "gc", imp.lookup).(types.ImporterFrom)
	p.imp = imp
	for _, r := range order(append(aux, p.Roots...), isRoot) {
		p.check(r, imp)
	}
	for _, path := range paths {
		if t, err := imp.Import(path); err == nil {
			p.add(t)
		} else if p.failed[path] == "" && isRoot[path] == nil {
			p.failed[path] = err.Error()
		}
	}
	return nil
}

// Load reads from export data the packages at paths that TypeCheck did
// not, with one go list run: packages a spec names through another
// package's imports.
func (p *Program) Load(paths []string) error {
	if p.imp == nil {
		return nil
	}
	var need, unlisted []string
	for _, path := range paths {
		if p.Pkg(path) == nil && valid(path) && !slices.Contains(need, path) {
			delete(p.failed, path)
			need = append(need, path)
			if p.imp.exports[path] == "" {
				unlisted = append(unlisted, path)
			}
		}
	}
	if len(unlisted) > 0 {
		exports, err := p.exports(unlisted)
		if err != nil {
			return err
		}
		for path, f := range exports {
			p.imp.exports[path] = f
		}
	}
	for _, path := range need {
		if t, err := p.imp.Import(path); err == nil {
			p.add(t)
		} else if p.failed[path] == "" {
			p.failed[path] = err.Error()
		}
	}
	return nil
}

// fromSource reads from source, as a target is read (our files left out),
// every package whose export data could not be made only because a file of
// ours does not compile, in it or in a package it imports: a stale output
// of a dependency never stops a run. It adds them to isRoot and the export
// data of what they import to exports, and returns them.
func (p *Program) fromSource(exports map[string]string, isRoot map[string]*Package) ([]*Package, error) {
	var aux []*Package
	for {
		var retry []string
		for path, msg := range p.failed {
			if isRoot[path] == nil && p.oursFails(msg) {
				retry = append(retry, path)
			}
		}
		if len(retry) == 0 {
			return aux, nil
		}
		slices.Sort(retry)
		listed, err := p.find(retry)
		if err != nil {
			return nil, err
		}
		var need []string
		for _, lp := range listed {
			delete(p.failed, lp.ImportPath)
			pkg := p.parse(lp)
			pkg.keepGenerated(nil)
			isRoot[pkg.PkgPath] = pkg
			aux = append(aux, pkg)
			for _, f := range pkg.Syntax {
				for _, is := range f.Imports {
					path, _ := strconv.Unquote(is.Path.Value)
					if path != "C" && path != "unsafe" && isRoot[path] == nil && exports[path] == "" && p.failed[path] == "" && !slices.Contains(need, path) {
						need = append(need, path)
					}
				}
			}
		}
		more, err := p.exports(need)
		if err != nil {
			return nil, err
		}
		maps.Copy(exports, more)
	}
}

// goPos matches a Go file's position in the go command's messages.
var goPos = regexp.MustCompile(`(?m)^(\S+\.go):\d+(:\d+)?: `)

// twoPackages matches the go command's message of a directory whose files
// are of two packages: its files, then its directory.
var twoPackages = regexp.MustCompile(`(?m)^found packages \S+ \((\S+\.go)\) and \S+ \((\S+\.go)\) in (.+)$`)

// oursFails reports whether the go command's message msg, of a package it
// could not build, is about a file a run does not read: ours, or empty.
func (p *Program) oursFails(msg string) bool {
	var paths []string
	for _, m := range goPos.FindAllStringSubmatch(msg, -1) {
		paths = append(paths, m[1])
	}
	for _, m := range twoPackages.FindAllStringSubmatch(msg, -1) {
		paths = append(paths, filepath.Join(m[3], m[1]), filepath.Join(m[3], m[2]))
	}
	for _, path := range paths {
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.dir, path)
		}
		if Replaceable(path) {
			return true
		}
	}
	return false
}

// goError returns an error go list reports, with its position when it has
// one.
func goError(pos, err string) string {
	if pos == "" {
		return err
	}
	return pos + ": " + err
}

// exports lists the packages at paths with one go list -export run and
// returns the file of each one's export data; it records those that
// failed.
func (p *Program) exports(paths []string) (map[string]string, error) {
	exports := map[string]string{}
	if len(paths) == 0 {
		return exports, nil
	}
	slices.Sort(paths)
	flags := []string{"-export", "-json=ImportPath,Export,Error,DepsErrors"}
	if p.Deps {
		flags = append(flags, "-deps")
	}
	listed, err := p.list(flags, paths)
	if err != nil {
		return nil, err
	}
	for _, lp := range listed {
		if p.Deps && !slices.Contains(paths, lp.ImportPath) {
			// A dependency listed with -deps: read when it has export
			// data, and never an error of its own (unsafe has none).
			if lp.Error == nil && lp.Export != "" {
				exports[lp.ImportPath] = lp.Export
			}
			continue
		}
		switch {
		case lp.Error != nil:
			p.failed[lp.ImportPath] = goError(lp.Error.Pos, lp.Error.Err)
		case lp.Export == "" && len(lp.DepsErrors) > 0:
			msgs := make([]string, len(lp.DepsErrors))
			for i, e := range lp.DepsErrors {
				msgs[i] = goError(e.Pos, e.Err)
			}
			p.failed[lp.ImportPath] = strings.Join(msgs, "\n")
		case lp.Export == "":
			p.failed[lp.ImportPath] = "no export data for " + lp.ImportPath
		default:
			exports[lp.ImportPath] = lp.Export
		}
	}
	return exports, nil
}

// check type-checks the target package r.
func (p *Program) check(r *Package, imp *importer) {
	for _, f := range r.Syntax {
		for _, is := range f.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			if msg := p.failed[path]; msg != "" {
				r.Errors = append(r.Errors, Error{Pos: p.Fset.Position(is.Path.Pos()), Msg: fmt.Sprintf("could not import %s: %s", path, msg)})
			}
		}
	}
	arch := os.Getenv("GOARCH")
	if arch == "" {
		arch = runtime.GOARCH
	}
	conf := types.Config{
		Importer:    imp,
		FakeImportC: true,
		Sizes:       types.SizesFor("gc", arch),
		Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) {
				r.Errors = append(r.Errors, Error{Pos: p.Fset.Position(te.Pos), Msg: te.Msg, Type: true})
			}
		},
	}
	r.Types, _ = conf.Check(r.PkgPath, p.Fset, r.Syntax, nil)
	imp.roots[r.PkgPath] = r.Types
	p.add(r.Types)
}

// order returns the target packages with files, each after the targets it
// imports.
func order(roots []*Package, byPath map[string]*Package) []*Package {
	var out []*Package
	seen := map[*Package]bool{}
	var visit func(r *Package)
	visit = func(r *Package) {
		if seen[r] {
			return
		}
		seen[r] = true
		for _, f := range r.Syntax {
			for _, is := range f.Imports {
				path, _ := strconv.Unquote(is.Path.Value)
				if dep := byPath[path]; dep != nil {
					visit(dep)
				}
			}
		}
		out = append(out, r)
	}
	for _, r := range roots {
		if len(r.GoFiles) > 0 {
			visit(r)
		}
	}
	return out
}

// valid reports whether path may be given to go list as an import path,
// not a pattern or a directory.
func valid(path string) bool {
	return path != "" && !strings.Contains(path, "...") && !strings.ContainsAny(path[:1], "-./") && !strings.ContainsAny(path, " \t\\")
}

// importer imports the packages a target imports: another target, as
// type-checked, or a package from its export data.
type importer struct {
	p       *Program
	exports map[string]string
	roots   map[string]*types.Package
	gc      types.ImporterFrom
}

func (i *importer) Import(path string) (*types.Package, error) {
	return i.ImportFrom(path, "", 0)
}

func (i *importer) ImportFrom(path, dir string, mode types.ImportMode) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	if t := i.roots[path]; t != nil {
		return t, nil
	}
	if msg := i.p.failed[path]; msg != "" {
		return nil, errors.New(msg)
	}
	t, err := i.gc.ImportFrom(path, dir, mode)
	if err == nil {
		i.p.add(t)
	}
	return t, err
}

// lookup opens the export data of the package at path.
func (i *importer) lookup(path string) (io.ReadCloser, error) {
	f := i.exports[path]
	if f == "" {
		return nil, fmt.Errorf("no export data for %s", path)
	}
	return os.Open(f)
}

// keepGenerated moves into r.Syntax each file of another generator that
// the files kept use: one declaring a name they use (or idents name), or a
// method of a type they declare. Another generator's output the package's
// own files do not use (moq's mocks, say) is not type-checked.
func (r *Package) keepGenerated(idents []string) {
	used := map[string]bool{}
	declared := map[string]bool{}
	note := func(f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				used[id.Name] = true
			}
			return true
		})
		for _, name := range topLevel(f) {
			declared[name] = true
		}
	}
	for _, id := range idents {
		used[id] = true
	}
	for _, f := range r.Syntax {
		note(f)
	}
	for changed := true; changed; {
		changed = false
		rest := r.generated[:0]
		for _, g := range r.generated {
			if usedBy(g, used, declared) {
				r.Syntax = append(r.Syntax, g)
				note(g)
				changed = true
			} else {
				rest = append(rest, g)
			}
		}
		r.generated = rest
	}
}

// usedBy reports whether the file g declares a name in used, or a method
// of a type in declared.
func usedBy(g *ast.File, used, declared map[string]bool) bool {
	for _, name := range topLevel(g) {
		if used[name] {
			return true
		}
	}
	for _, d := range g.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List) > 0 && declared[recvName(fd.Recv.List[0].Type)] {
			return true
		}
	}
	return false
}

// topLevel returns the names f declares at package level, methods left
// out.
func topLevel(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names = append(names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}

// recvName returns the name of a method receiver's base type.
func recvName(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
