package generator

import (
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
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
	specs []*ifaceSpec
	out   string
	// manifest marks the package the manifest's output belongs to.
	manifest bool
}

// Generate reads the directives and manifest cfg names and returns the
// files to write. Its error is an ErrorList when the input is at fault.
// Nothing is returned when anything failed.
//
// A run is a pipeline: load the packages, collect the specs their
// directives and the manifest give, build and check a Model per package,
// name its identifiers, render it, and check that every file it replaces
// is ours.
func Generate(cfg Config) ([]Output, error) {
	dir, err := workDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	var errs ErrorList
	var m *manifest
	if cfg.Manifest != "" {
		if m = readManifest(abspath(dir, cfg.Manifest), &errs); m == nil {
			return nil, errs.err(dir)
		}
	}
	l, err := load(dir, patterns(cfg, dir, m), cfg.Tags)
	if err != nil {
		return nil, err
	}
	targets := collect(l, cfg, dir, m, &errs)
	if err := l.more(dir, namedPackages(l, targets), cfg.Tags); err != nil {
		return nil, err
	}
	var models []*Model
	circuits := map[string]*Circuit{}
	for _, t := range targets {
		var defaults options
		if t.manifest {
			defaults = m.Defaults
		}
		models = append(models, build(l, t, defaults, circuits, &errs))
	}
	if err := errs.err(dir); err != nil {
		return nil, err
	}
	outs := make([]Output, 0, len(models))
	for _, md := range models {
		src, err := render(md, name(md))
		if err != nil {
			return nil, err
		}
		outs = append(outs, Output{Path: md.Path, Content: src})
	}
	if err := owned(outs).err(dir); err != nil {
		return nil, err
	}
	return outs, nil
}

// workDir returns dir, or the working directory, as an absolute path.
func workDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		return wd, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	return abs, nil
}

// patterns returns the packages to load: cfg's, or the package in dir,
// and the package the manifest's output goes into.
func patterns(cfg Config, dir string, m *manifest) []string {
	ps := slices.Clone(cfg.Patterns)
	if len(ps) == 0 && m == nil {
		ps = []string{"."}
	}
	if m != nil {
		mdir := relPattern(dir, filepath.Dir(m.Output))
		if !slices.ContainsFunc(ps, func(p string) bool { return abspath(dir, p) == filepath.Dir(m.Output) }) {
			ps = append(ps, mdir)
		}
		// The packages it lists load in the same go list run: a second
		// one costs more than reading them without function bodies.
		for _, path := range sourcesOf(m) {
			if !slices.Contains(ps, path) {
				ps = append(ps, path)
			}
		}
	}
	return ps
}

// sourcesOf returns the import paths of the packages a manifest lists
// interfaces of, other than its own.
func sourcesOf(m *manifest) []string {
	var paths []string
	for _, spec := range m.Interfaces {
		if spec.PkgPath != "" && !slices.Contains(paths, spec.PkgPath) {
			paths = append(paths, spec.PkgPath)
		}
	}
	return paths
}

// collect reads the directives of every loaded package and the manifest's
// interfaces into the targets that have something to generate.
func collect(l *loaded, cfg Config, dir string, m *manifest, errs *ErrorList) []*target {
	var targets []*target
	sawManifest := false
	var sources []string
	if m != nil {
		sources = sourcesOf(m)
	}
	for _, pkg := range l.roots {
		listed := slices.Contains(sources, pkg.PkgPath) || slices.Contains(sources, pkg.ID)
		if listed && !asked(cfg.Patterns, dir, pkg) && (len(pkg.GoFiles) == 0 || filepath.Dir(pkg.GoFiles[0]) != filepath.Dir(m.Output)) {
			continue // only a source of the manifest: its errors are reported where it is listed
		}
		if len(pkg.GoFiles) == 0 || pkg.Types == nil {
			reportLoadErrors(pkg, errs, false, l.ours)
			if len(pkg.Errors) == 0 {
				errs.add(posOf(""), "%s: no Go files", pkg.ID)
			}
			continue
		}
		reportLoadErrors(pkg, errs, true, l.ours)
		pdir := filepath.Dir(pkg.GoFiles[0])
		t := &target{pkg: pkg, out: filepath.Join(pdir, DefaultOutput)}
		t.specs = readDirectives(l.fset, pkg.Syntax, pdir, errs)
		if m != nil && filepath.Dir(m.Output) == pdir {
			sawManifest = true
			t.manifest, t.out = true, m.Output
			t.specs = append(t.specs, m.Interfaces...)
		}
		if cfg.GoPackage != "" && len(cfg.Patterns) == 0 && m == nil && cfg.GoPackage != pkg.Name {
			errs.add(posOf(os.Getenv("GOFILE")), "go:generate runs in package %s, but the package in %s is %s: circuitgen generates no test packages", cfg.GoPackage, relPath(dir, pdir), pkg.Name)
		}
		if len(t.specs) > 0 {
			targets = append(targets, t)
		}
	}
	if m != nil && !sawManifest {
		errs.add(posOf(m.Path), "no Go package in %s, where the manifest's output goes: add a Go file with a package clause", relPath(dir, filepath.Dir(m.Output)))
	}
	slices.SortFunc(targets, func(a, b *target) int { return strings.Compare(a.out, b.out) })
	if len(targets) == 0 && len(*errs) == 0 {
		errs.add(posOf(""), "nothing to generate: no interface has a %sguard directive and no manifest lists one", directivePrefix)
	}
	if cfg.Out != "" {
		out := abspath(dir, cfg.Out)
		switch {
		case badOutput(cfg.Out) != "":
			errs.add(posOf(""), "-out %q %s", cfg.Out, badOutput(cfg.Out))
		case len(targets) > 1:
			errs.add(posOf(""), "-out names one file, but %d packages have guarded interfaces", len(targets))
		case len(targets) == 1 && filepath.Dir(out) != filepath.Dir(targets[0].out):
			errs.add(posOf(""), "-out %s is not in the directory of package %s", cfg.Out, targets[0].pkg.Name)
		case len(targets) == 1:
			targets[0].out = out
		}
	}
	// One package has one output: another file of ours in it declares
	// what this run's output declares again.
	for _, t := range targets {
		for _, f := range t.pkg.GoFiles {
			if l.ours[f] && f != t.out {
				errs.add(token.Position{Filename: f, Line: 1, Column: 1}, "%s is another output of circuitgen in package %s, whose declarations %s would declare again: one package has one output; remove it, or write to it (-out, the manifest's output)",
					filepath.Base(f), t.pkg.Name, filepath.Base(t.out))
			}
		}
	}
	return targets
}

// asked reports whether one of patterns, seen from dir, names pkg: a
// directory pattern (., ./x, ../x, an absolute path) its directory, any
// other its import path; ... matches any string, and a final /... the
// packages below it and itself, as go list matches them.
func asked(patterns []string, dir string, pkg *packages.Package) bool {
	pdir := ""
	if len(pkg.GoFiles) > 0 {
		pdir = filepath.ToSlash(filepath.Dir(pkg.GoFiles[0]))
	}
	for _, p := range patterns {
		q := filepath.ToSlash(p)
		if q == "." || q == ".." || strings.HasPrefix(q, "./") || strings.HasPrefix(q, "../") || filepath.IsAbs(p) {
			if pdir != "" && matchPattern(filepath.ToSlash(abspath(dir, p)), pdir) {
				return true
			}
		} else if matchPattern(p, pkg.PkgPath) {
			return true
		}
	}
	return false
}

// matchPattern reports whether name matches pattern, whose ... matches any
// string and whose final /... also matches nothing.
func matchPattern(pattern, name string) bool {
	re := regexp.QuoteMeta(pattern)
	if strings.HasSuffix(re, `/\.\.\.`) {
		re = strings.TrimSuffix(re, `/\.\.\.`) + `(/\.\.\.)?`
	}
	re = strings.ReplaceAll(re, `\.\.\.`, `.*`)
	ok, _ := regexp.MatchString("^"+re+"$", name)
	return ok
}

// namedPackages returns the import paths the specs of targets name: the
// packages a manifest lists, and those of the errors and classifiers
// their options name.
func namedPackages(l *loaded, targets []*target) []string {
	var paths []string
	for _, t := range targets {
		for _, spec := range t.specs {
			if spec.PkgPath != "" {
				paths = append(paths, spec.PkgPath)
			}
			levels := []options{spec.Opts}
			for _, ms := range spec.Methods {
				levels = append(levels, ms.Opts)
			}
			for _, o := range levels {
				names := o.list("errors")
				if c, s, ok := o.str("classifier"); ok {
					names = append(names, item{Text: c, Pos: s.Pos})
				}
				for _, n := range names {
					qual := strings.TrimPrefix(n.Text, "*")
					i := strings.LastIndex(qual, ".")
					if i <= 0 {
						continue
					}
					qual = qual[:i]
					if path := l.importedAs(qual, spec.File); path != "" {
						qual = path
					}
					paths = append(paths, qual)
				}
			}
		}
	}
	return paths
}

// owned reports each output that would replace a file circuitgen did not
// write.
func owned(outs []Output) ErrorList {
	var errs ErrorList
	for _, o := range outs {
		if _, err := os.Lstat(o.Path); err == nil && !isOurs(o.Path) {
			errs.add(token.Position{Filename: o.Path, Line: 1, Column: 1},
				"%s exists and was not written by circuitgen (it lacks the header %q): refusing to overwrite it; rename it, or write elsewhere with -out or the manifest's output",
				filepath.Base(o.Path), Header)
		}
	}
	return errs
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
