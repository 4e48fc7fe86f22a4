package generator

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/circuitgen/circuitgen/generator/internal/diag"
	"github.com/circuitgen/circuitgen/generator/internal/load"
	"github.com/circuitgen/circuitgen/generator/internal/model"
	"github.com/circuitgen/circuitgen/generator/internal/render"
	"github.com/circuitgen/circuitgen/generator/internal/spec"
)

// DefaultOutput is the name of the generated file beside a package's files.
const DefaultOutput = spec.DefaultOutput

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
	// Warnings receives what may be wrong in a run that succeeds (a
	// selection that can match nothing a method returns), one a line as
	// file:line:col: warning: message; nil discards them.
	Warnings io.Writer
}

// Output is one generated file.
type Output struct {
	// Path is where the file goes.
	Path string
	// Content is the file's gofmt'd content.
	Content []byte
}

// run is one Generate: its configuration, and the one collector every
// stage records problems in.
type run struct {
	cfg  Config
	dir  string
	errs diag.Collector
	// manifest is the manifest the configuration names, if any;
	// manifests are every manifest the run reads: it, and the
	// circuitgen.yaml beside each package the patterns match.
	manifest  *spec.Manifest
	manifests []*spec.Manifest
	prog      *load.Program
}

// Generate reads the directives and manifest cfg names and returns the
// files to write. Its error is an ErrorList when the input is at fault.
// Nothing is returned when anything failed.
//
// A run is a pipeline: parse the packages, read the specs their
// directives and the manifest give, type-check the packages, build and
// check a model per output file, render it, and check that every file it
// replaces is ours.
func Generate(cfg Config) ([]Output, error) {
	dir, err := workDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, dir: dir}
	if cfg.Manifest != "" {
		if r.manifest = spec.ReadManifest(abspath(dir, cfg.Manifest), &r.errs); r.manifest == nil {
			return nil, r.errs.Err(dir)
		}
		r.manifests = append(r.manifests, r.manifest)
	}
	if r.prog, err = load.Parse(dir, r.patterns(), cfg.Tags); err != nil {
		return nil, err
	}
	r.besideManifests()
	targets := r.targets()
	paths, idents := r.named(targets)
	r.prog.Deps = r.namesImports(targets)
	if err := r.prog.TypeCheck(paths, idents); err != nil {
		return nil, err
	}
	if err := r.prog.Load(r.inScope(targets)); err != nil {
		return nil, err
	}
	for _, pkg := range r.prog.Roots {
		r.loadErrors(pkg)
	}
	build := model.NewRun(r.prog, &r.errs)
	files := make([]*model.File, len(targets))
	for i, t := range targets {
		files[i] = build.Build(t)
	}
	if err := r.errs.Err(dir); err != nil {
		return nil, err
	}
	outs := make([]Output, 0, 2*len(files))
	for _, f := range files {
		src, err := render.File(f)
		if err != nil {
			return nil, err
		}
		test, err := render.Assertions(f)
		if err != nil {
			return nil, err
		}
		outs = append(outs, Output{Path: f.Path, Content: src}, Output{Path: f.TestPath, Content: test})
	}
	r.owned(outs)
	if err := r.errs.Err(dir); err != nil {
		return nil, err
	}
	if w := cfg.Warnings; w != nil {
		for _, warning := range r.errs.Warnings(dir) {
			if _, err := fmt.Fprintln(w, warning.Error()); err != nil {
				return nil, fmt.Errorf("write warnings: %w", err)
			}
		}
	}
	return outs, nil
}

// ManifestFile is the name of the manifest circuitgen reads beside a
// package whenever it reads the package: -check ./... checks what every
// manifest generates.
const ManifestFile = "circuitgen.yaml"

// besideManifests reads the manifest beside each package the run parsed,
// unless it is the one the configuration names.
func (r *run) besideManifests() {
	for _, pkg := range r.prog.Roots {
		if pkg.Dir() == "" {
			continue
		}
		path := filepath.Join(pkg.Dir(), ManifestFile)
		if r.manifest != nil && r.manifest.Path == path {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if m := spec.ReadManifest(path, &r.errs); m != nil {
			r.manifests = append(r.manifests, m)
		}
	}
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

// patterns returns the packages to load: the configuration's, or the
// package in the run's directory, and the package the manifest's output
// goes into.
func (r *run) patterns() []string {
	ps := slices.Clone(r.cfg.Patterns)
	m := r.manifest
	if len(ps) == 0 && m == nil {
		ps = []string{"."}
	}
	if m != nil {
		mdir := relPattern(r.dir, filepath.Dir(m.Output))
		if !slices.ContainsFunc(ps, func(p string) bool { return abspath(r.dir, p) == filepath.Dir(m.Output) }) {
			ps = append(ps, mdir)
		}
		// A package the manifest lists is a target of its own too when
		// the patterns name it, which go list may not match (./... skips
		// testdata).
		for _, path := range m.Sources() {
			if !slices.Contains(ps, path) && slices.ContainsFunc(r.cfg.Patterns, func(p string) bool { return !isDirPattern(p) && matchPattern(p, path) }) {
				ps = append(ps, path)
			}
		}
	}
	return ps
}

// isDirPattern reports whether the go list pattern p names directories
// (., ./x, ../x, an absolute path) rather than import paths.
func isDirPattern(p string) bool {
	q := filepath.ToSlash(p)
	return q == "." || q == ".." || strings.HasPrefix(q, "./") || strings.HasPrefix(q, "../") || filepath.IsAbs(p)
}

// matchPattern reports whether name matches pattern, whose ... matches any
// string and whose final /... also matches nothing, as go list matches
// import paths.
func matchPattern(pattern, name string) bool {
	re := regexp.QuoteMeta(pattern)
	if strings.HasSuffix(re, `/\.\.\.`) {
		re = strings.TrimSuffix(re, `/\.\.\.`) + `(/\.\.\.)?`
	}
	re = strings.ReplaceAll(re, `\.\.\.`, `.*`)
	ok, _ := regexp.MatchString("^"+re+"$", name)
	return ok
}

// owned reports each output that would replace a file circuitgen did not
// write.
func (r *run) owned(outs []Output) {
	for _, o := range outs {
		if _, err := os.Lstat(o.Path); err == nil && !load.Replaceable(o.Path) {
			r.errs.Add(diag.FileStart(o.Path),
				"%s exists and was not written by circuitgen (it lacks the header %q): refusing to overwrite it; rename it, or write elsewhere with -out or the manifest's output",
				filepath.Base(o.Path), load.Header)
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
