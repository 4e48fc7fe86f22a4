package generator

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/diag"
	"github.com/circuitgen/circuitgen/generator/internal/load"
	"github.com/circuitgen/circuitgen/generator/internal/model"
	"github.com/circuitgen/circuitgen/generator/internal/spec"
)

// targets reads the directives of every root package, and the manifest's
// interfaces, into the targets that have something to generate.
func (r *run) targets() []model.Target {
	var targets []model.Target
	saw := map[*spec.Manifest]bool{}
	for _, pkg := range r.prog.Roots {
		if len(pkg.GoFiles) == 0 {
			if len(pkg.Errors) == 0 {
				r.errs.Add(diag.File(""), "%s: no Go files", pkg.ID)
			}
			continue
		}
		pdir := pkg.Dir()
		t := model.Target{Pkg: pkg, Out: filepath.Join(pdir, DefaultOutput)}
		t.Specs = spec.ReadDirectives(r.prog.Fset, pkg.Syntax, pdir, &r.errs)
		var from *spec.Manifest
		for _, m := range r.manifests {
			if filepath.Dir(m.Output) != pdir {
				continue
			}
			saw[m] = true
			if from != nil {
				r.errs.Add(diag.FileStart(m.Path), "manifests %s and %s both write package %s: one package has one output; list its interfaces in one manifest",
					diag.RelPath(r.dir, from.Path), diag.RelPath(r.dir, m.Path), pkg.Name)
				continue
			}
			from = m
			t.Out, t.Defaults = m.Output, m.Defaults
			t.Specs = append(t.Specs, m.Interfaces...)
		}
		if r.cfg.GoPackage != "" && len(r.cfg.Patterns) == 0 && r.manifest == nil && r.cfg.GoPackage != pkg.Name {
			r.errs.Add(diag.File(os.Getenv("GOFILE")), "go:generate runs in package %s, but the package in %s is %s: circuitgen generates no test packages", r.cfg.GoPackage, diag.RelPath(r.dir, pdir), pkg.Name)
		}
		if len(t.Specs) > 0 {
			targets = append(targets, t)
		} else if !generatesOwn(pkg) && r.errs.Len() == 0 {
			r.orphans(pkg) // unless a misspelled directive or a broken manifest is why
		}
	}
	for _, m := range r.manifests {
		if !saw[m] {
			r.errs.Add(diag.File(m.Path), "no Go package in %s, where the manifest's output goes: add a Go file with a package clause", diag.RelPath(r.dir, filepath.Dir(m.Output)))
		}
	}
	slices.SortFunc(targets, func(a, b model.Target) int { return strings.Compare(a.Out, b.Out) })
	if len(targets) == 0 && r.errs.Len() == 0 {
		r.errs.Add(diag.File(""), "nothing to generate: no interface has a %sguard directive and no manifest lists one", spec.DirectivePrefix)
	}
	r.applyOut(targets)
	// One package has one output: another file of ours in it declares
	// what this run's output declares again.
	for _, t := range targets {
		for _, f := range t.Pkg.GoFiles {
			if t.Pkg.Ours[f] && f != t.Out {
				r.errs.Add(diag.FileStart(f), "%s is another output of circuitgen in package %s, whose declarations %s would declare again: one package has one output; remove it, or write to it (-out, the manifest's output)",
					filepath.Base(f), t.Pkg.Name, filepath.Base(t.Out))
			}
		}
	}
	return targets
}

// applyOut points the one target at -out, if given.
func (r *run) applyOut(targets []model.Target) {
	out := r.cfg.Out
	if out == "" {
		return
	}
	abs := abspath(r.dir, out)
	switch {
	case spec.BadOutput(out) != "":
		r.errs.Add(diag.File(""), "-out %q %s", out, spec.BadOutput(out))
	case len(targets) > 1:
		r.errs.Add(diag.File(""), "-out names one file, but %d packages have guarded interfaces", len(targets))
	case len(targets) == 1 && filepath.Dir(abs) != filepath.Dir(targets[0].Out):
		r.errs.Add(diag.File(""), "-out %s is not in the directory of package %s", out, targets[0].Pkg.Name)
	case len(targets) == 1:
		targets[0].Out = abs
	}
}

// loadErrors records a target package's list, parse and import errors.
// Type errors are expected while a guarded client is missing; they are
// reported only when a guarded signature is broken (see the model).
func (r *run) loadErrors(pkg *load.Package) {
	for _, e := range pkg.Errors {
		if !e.Type {
			r.errs.Add(e.Pos, "%s", e.Msg)
		}
	}
}

// named returns the import paths the specs of targets name (the
// packages a manifest lists, and those of the errors and classifiers their
// options name), and the identifiers of the target packages they name.
func (r *run) named(targets []model.Target) (paths, idents []string) {
	for _, t := range targets {
		for _, s := range t.Specs {
			if s.PkgPath != "" {
				paths = append(paths, s.PkgPath)
			} else {
				idents = append(idents, s.Name)
			}
			for _, n := range s.Names() {
				name := strings.TrimPrefix(n.Val, "*")
				i := strings.LastIndex(name, ".")
				if i <= 0 {
					idents = append(idents, name)
					continue
				}
				qual := name[:i]
				if path := r.prog.ImportedAs(qual, s.File); path != "" {
					qual = path
				}
				paths = append(paths, qual)
			}
		}
	}
	return paths, idents
}

// namesImports reports whether a manifest entry for an interface of
// another package names something by a package name that is not an import
// path, one the interface's package may import (nats.ErrTimeout for a
// jetstream interface): the load then lists every dependency's export
// data at once, for inScope's packages.
func (r *run) namesImports(targets []model.Target) bool {
	for _, t := range targets {
		for _, s := range t.Specs {
			if !s.Manifest || s.PkgPath == "" {
				continue
			}
			for _, n := range s.Names() {
				name := strings.TrimPrefix(n.Val, "*")
				i := strings.LastIndex(name, ".")
				if i > 0 && !strings.ContainsAny(name[:i], "/.") && name[:i] != path.Base(s.PkgPath) && !stdRoot[name[:i]] {
					return true
				}
			}
		}
	}
	return false
}

// stdRoot are the standard library's packages whose import path is one
// word, which a manifest may name by it.
var stdRoot = map[string]bool{
	"bufio": true, "bytes": true, "cmp": true, "context": true, "embed": true, "errors": true,
	"expvar": true, "flag": true, "fmt": true, "hash": true, "html": true, "image": true, "io": true,
	"iter": true, "log": true, "maps": true, "math": true, "mime": true, "net": true, "os": true,
	"path": true, "plugin": true, "reflect": true, "regexp": true, "runtime": true, "slices": true,
	"sort": true, "strconv": true, "strings": true, "structs": true, "sync": true, "syscall": true,
	"testing": true, "time": true, "unicode": true, "unique": true, "unsafe": true, "weak": true,
}

// inScope returns the import paths of the packages the manifest entries of
// targets name through the interface's package: that package's own
// imports, by their names (nats.ErrTimeout in an entry for a jetstream
// interface).
func (r *run) inScope(targets []model.Target) []string {
	var paths []string
	for _, t := range targets {
		for _, s := range t.Specs {
			pkg := r.prog.Pkg(s.PkgPath)
			if !s.Manifest || pkg == nil {
				continue
			}
			for _, n := range s.Names() {
				name := strings.TrimPrefix(n.Val, "*")
				i := strings.LastIndex(name, ".")
				if i <= 0 || r.prog.ImportedAs(name[:i], s.File) != "" {
					continue
				}
				if path := model.InScope(name[:i], pkg); path != name[:i] && path != pkg.Path() {
					paths = append(paths, path)
				}
			}
		}
	}
	return paths
}

// ownFlags matches a //go:generate line running circuitgen with a
// manifest, an output or build tags of its own.
var ownFlags = regexp.MustCompile(`^//go:generate\s.*circuitgen.*\s--?(manifest|out|tags)\b`)

// besideManifest matches the flag naming the manifest beside the
// package, which every run reads.
var besideManifest = regexp.MustCompile(`\s--?manifest[= ]circuitgen\.yaml\b`)

// generatesOwn reports whether a //go:generate line of pkg runs circuitgen
// with a manifest, an output or tags of its own: the outputs of ours in
// the package are that line's, which a run without its flags cannot tell.
func generatesOwn(pkg *load.Package) bool {
	for _, f := range pkg.Syntax {
		for _, g := range f.Comments {
			for _, c := range g.List {
				if ownFlags.MatchString(besideManifest.ReplaceAllString(c.Text, "")) {
					return true
				}
			}
		}
	}
	return false
}

// orphans reports every output of ours in pkg, which guards nothing: what
// it wraps, with the policies of an earlier run, would stay and be
// checked by no run.
func (r *run) orphans(pkg *load.Package) {
	for _, f := range pkg.GoFiles {
		if pkg.Ours[f] {
			r.errs.Add(diag.FileStart(f), "%s is an output of circuitgen, but package %s guards nothing (no %sguard directive, no %s): remove it and %s, or guard an interface again",
				filepath.Base(f), pkg.Name, spec.DirectivePrefix, ManifestFile, filepath.Base(model.TestFile(f)))
		}
	}
}
