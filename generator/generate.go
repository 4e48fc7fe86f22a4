package generator

import (
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Config is one run of the generator.
type Config struct {
	// Dir is the directory patterns and relative paths are taken from;
	// "" is the current directory.
	Dir string
	// Patterns are the packages whose //circuitgen: directives to read; none
	// means the package in Dir, or the manifest's package.
	Patterns []string
	// Manifest is the circuitgen.yaml to read, if any.
	Manifest string
	// Out overrides the output file; it needs exactly one package.
	Out string
	// Tags are build tags for loading.
	Tags []string
	// GoPackage is $GOPACKAGE under go generate: the package the directive
	// that runs circuitgen is in.
	GoPackage string
}

// Output is one generated file.
type Output struct {
	// Path is where the file goes.
	Path string
	// Content is the file's gofmt'd content.
	Content []byte
}

// target is one package the run writes a file for.
type target struct {
	pkg   *packages.Package
	dir   string
	specs []*ifaceSpec
	out   string
	// manifest marks the package the manifest's output belongs to.
	manifest bool
}

// Generate reads the directives and manifest cfg names and returns the
// files to write. Its error is an ErrorList when the input is at fault.
// Nothing is returned when anything failed.
func Generate(cfg Config) ([]Output, error) {
	dir := cfg.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	var errs ErrorList
	var m *manifest
	if cfg.Manifest != "" {
		m = readManifest(abspath(dir, cfg.Manifest), &errs)
		if m == nil {
			return nil, errs.err(dir)
		}
	}
	out := ""
	if cfg.Out != "" {
		out = abspath(dir, cfg.Out)
	}

	patterns := slices.Clone(cfg.Patterns)
	var dirs []string // target directories, where a previous output may be
	switch {
	case len(patterns) == 0 && m != nil:
	case len(patterns) == 0:
		patterns = []string{"."}
	}
	for _, p := range patterns {
		if !strings.Contains(p, "...") && (p == "." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || filepath.IsAbs(p)) {
			dirs = append(dirs, abspath(dir, p))
		}
	}
	if m != nil {
		mdir := filepath.Dir(m.Output)
		if !slices.Contains(dirs, mdir) {
			dirs = append(dirs, mdir)
			patterns = append(patterns, relPattern(dir, mdir))
		}
	}
	if out != "" {
		dirs = append(dirs, filepath.Dir(out))
	}
	// Packages a manifest names by import path are loaded in the same call.
	extra := map[string]bool{}
	if m != nil {
		for _, spec := range m.Interfaces {
			if spec.PkgPath != "" {
				extra[spec.PkgPath] = true
			}
			addQualifiers(spec.Opts, extra)
			for _, ms := range spec.Methods {
				addQualifiers(ms.Opts, extra)
			}
		}
	}
	for _, d := range dirs {
		scanQualifiers(d, extra)
	}
	for p := range extra {
		patterns = append(patterns, p)
	}
	slices.Sort(patterns[len(patterns)-len(extra):])

	l, err := load(dir, patterns, cfg.Tags, dirs)
	if err != nil {
		return nil, err
	}

	var targets []*target
	for _, pkg := range l.roots {
		if len(pkg.GoFiles) == 0 || pkg.Types == nil {
			if !extra[pkg.PkgPath] && !extra[pkg.ID] {
				reportLoadErrors(pkg, &errs, false, l.ours)
				if len(pkg.Errors) == 0 {
					errs.add(posOf(""), "%s: no Go files", pkg.ID)
				}
			}
			continue
		}
		pdir := filepath.Dir(pkg.GoFiles[0])
		if extra[pkg.PkgPath] && !slices.Contains(dirs, pdir) {
			continue
		}
		reportLoadErrors(pkg, &errs, true, l.ours)
		t := &target{pkg: pkg, dir: pdir, out: filepath.Join(pdir, DefaultOutput)}
		t.specs = readDirectives(l.fset, pkg.Syntax, pdir, &errs)
		if m != nil && filepath.Dir(m.Output) == pdir {
			t.manifest, t.out = true, m.Output
			t.specs = append(t.specs, m.Interfaces...)
		}
		if cfg.GoPackage != "" && len(cfg.Patterns) == 0 && m == nil && cfg.GoPackage != pkg.Name {
			errs.add(posOf(os.Getenv("GOFILE")), "go:generate runs in package %s, but the package in %s is %s: circuitgen generates no test packages", cfg.GoPackage, relPath(dir, pdir), pkg.Name)
		}
		targets = append(targets, t)
	}
	if m != nil && !slices.ContainsFunc(targets, func(t *target) bool { return t.manifest }) {
		errs.add(posOf(m.Path), "no Go package in %s, where the manifest's output goes: add a Go file with a package clause", relPath(dir, filepath.Dir(m.Output)))
	}
	slices.SortFunc(targets, func(a, b *target) int { return strings.Compare(a.dir, b.dir) })

	var models []*Model
	for _, t := range targets {
		if len(t.specs) == 0 {
			continue
		}
		b := newBuilder(l, &errs, t.pkg, t.out)
		var defaults options
		if t.manifest {
			defaults = m.Defaults
		}
		for _, spec := range t.specs {
			d := options{}
			if spec.Manifest {
				d = defaults
			}
			b.addInterface(spec, d)
		}
		models = append(models, b.model)
	}
	if len(models) == 0 && len(errs) == 0 {
		errs.add(posOf(""), "nothing to generate: no interface has a %sguard directive and no manifest lists one", directivePrefix)
	}
	if out != "" {
		if len(models) > 1 {
			errs.add(posOf(""), "-out names one file, but %d packages have guarded interfaces", len(models))
		} else if len(models) == 1 {
			if filepath.Dir(out) != filepath.Dir(models[0].Path) {
				errs.add(posOf(""), "-out %s is not in the directory of package %s", cfg.Out, models[0].PkgName)
			}
			models[0].Path = out
		}
	}
	for _, md := range models {
		if _, err := os.Lstat(md.Path); err == nil && !isOurs(md.Path) {
			errs.add(token.Position{Filename: md.Path, Line: 1, Column: 1},
				"%s exists and was not written by circuitgen (it lacks the header %q): refusing to overwrite it; rename it, or write elsewhere with -out or the manifest's output",
				filepath.Base(md.Path), Header)
		}
	}
	if err := errs.err(dir); err != nil {
		return nil, err
	}
	outs := make([]Output, 0, len(models))
	for _, md := range models {
		src, err := render(md)
		if err != nil {
			return nil, err
		}
		outs = append(outs, Output{Path: md.Path, Content: src})
	}
	return outs, nil
}

// reportLoadErrors records a root package's list and parse errors. Type
// errors are expected while a guarded client is missing; they are reported
// only when a guarded signature is broken (see builder.checkType).
func reportLoadErrors(pkg *packages.Package, errs *ErrorList, skipTypeErrors bool, ours map[string]bool) {
	for _, e := range pkg.Errors {
		if ours[parsePos(e.Pos).Filename] {
			continue // a previous output of ours, stale or broken: replaced
		}
		// Type errors, and the compiler's when go list builds export
		// data, are expected while the guarded client does not exist yet.
		if skipTypeErrors && (e.Kind == packages.TypeError || strings.HasPrefix(e.Msg, "# ")) {
			continue
		}
		errs.add(parsePos(e.Pos), "%s", e.Msg)
	}
}

// addQualifiers adds the package part of each errors= entry to paths.
func addQualifiers(o options, paths map[string]bool) {
	for _, e := range o.Errors.Val {
		name := strings.TrimPrefix(e.Name, "*")
		if i := strings.LastIndex(name, "."); i > 0 && strings.Contains(name[:i], "/") {
			paths[name[:i]] = true
		}
	}
}

// abspath resolves path against dir.
func abspath(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}

// relPattern returns a go list pattern for the directory d, seen from dir.
func relPattern(dir, d string) string {
	rel, err := filepath.Rel(dir, d)
	if err != nil {
		return d
	}
	if !strings.HasPrefix(rel, "..") {
		rel = "." + string(filepath.Separator) + rel
	}
	return filepath.ToSlash(rel)
}

// scanQualifiers adds the import paths that errors= entries of the
// directives in dir's Go files spell out, so that the one load has them.
func scanQualifiers(dir string, paths map[string]bool) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(data), directivePrefix) {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			_, rest, ok := strings.Cut(line, directivePrefix)
			if !ok {
				continue
			}
			for _, w := range strings.Fields(rest) {
				if v, ok := strings.CutPrefix(w, "errors="); ok {
					var o options
					for _, name := range strings.Split(v, ",") {
						o.Errors.Val = append(o.Errors.Val, entry{Name: name})
					}
					addQualifiers(o, paths)
				}
			}
		}
	}
}
