package main

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// rewrite returns the go.mod file data of module self (file names it in
// errors) with every requirement on a module of mods set to version. A
// command module loses its replace lines for its siblings; any other module
// gets a replace line to the sibling's directory, relative to its own, for
// each sibling it requires and does not replace yet.
func rewrite(file string, data []byte, self *Module, mods []*Module, version string) ([]byte, error) {
	f, err := modfile.Parse(file, data, nil)
	if err != nil {
		return nil, err
	}
	byPath := paths(mods)
	for _, r := range slices.Clone(f.Require) {
		if byPath[r.Mod.Path] == nil || r.Mod.Version == version {
			continue
		}
		if err := f.AddRequire(r.Mod.Path, version); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
	}
	if self.Command {
		for _, r := range slices.Clone(f.Replace) {
			if byPath[r.Old.Path] != nil {
				if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
					return nil, fmt.Errorf("%s: %v", file, err)
				}
			}
		}
	} else {
		for _, r := range f.Require {
			s := byPath[r.Mod.Path]
			if s == nil || replaced(f, r.Mod.Path) {
				continue
			}
			if err := f.AddReplace(r.Mod.Path, "", relDir(self.Dir, s.Dir), ""); err != nil {
				return nil, fmt.Errorf("%s: %v", file, err)
			}
		}
	}
	f.Cleanup()
	return f.Format()
}

// replaced reports whether f has a replace line for every version of path.
func replaced(f *modfile.File, path string) bool {
	for _, r := range f.Replace {
		if r.Old.Path == path && r.Old.Version == "" {
			return true
		}
	}
	return false
}

// relDir is the relative path from directory from to directory to, both
// slash-separated and relative to the repository's root, as a go.mod
// replace line names a directory ("../..", "../generator").
func relDir(from, to string) string {
	up := 0
	if from != "." {
		up = strings.Count(from, "/") + 1
	}
	rel := strings.TrimSuffix(strings.Repeat("../", up), "/")
	if to != "." {
		if rel == "" {
			rel = "."
		}
		rel = rel + "/" + to
	}
	if rel == "" {
		return "."
	}
	return rel
}

// check returns what makes the published modules of mods unfit to tag:
// a requirement on a sibling at a pseudo-version (the zero one above all), at
// another version than the others or than version when it is not empty, or
// on a dev-only module; a replace line in a command module; a library
// module's sibling requirement without a replace line to the sibling's
// directory.
func check(mods []*Module, version string) []string {
	var problems []string
	report := func(m *Module, format string, args ...any) {
		problems = append(problems, path.Join(m.Dir, "go.mod")+": "+fmt.Sprintf(format, args...))
	}
	byPath := paths(mods)
	seen := map[string]string{} // version → the first requirement naming it
	for _, m := range mods {
		if !m.Published {
			continue
		}
		for _, r := range m.file.Require {
			s := byPath[r.Mod.Path]
			if s == nil {
				continue
			}
			v := r.Mod.Version
			switch {
			case !s.Published:
				report(m, "requires %s, a dev-only module", r.Mod.Path)
			case v == module.ZeroPseudoVersion("v0") || v == module.ZeroPseudoVersion("v1"):
				report(m, "requires %s at the zero pseudo-version %s, which no module proxy serves", r.Mod.Path, v)
			case module.IsPseudoVersion(v):
				report(m, "requires %s at the pseudo-version %s, not a released version", r.Mod.Path, v)
			case version != "" && v != version:
				report(m, "requires %s %s, not %s", r.Mod.Path, v, version)
			}
			if _, ok := seen[v]; !ok {
				seen[v] = m.Dir + " requires " + r.Mod.Path + " " + v
			}
			if !m.Command && !s.Command {
				want := relDir(m.Dir, s.Dir)
				if got := replacement(m.file, r.Mod.Path); got != want {
					report(m, "replaces %s with %q, want %q (the checkout, for GOWORK=off before publication)", r.Mod.Path, got, want)
				}
			}
		}
		if m.Command {
			for _, r := range m.file.Replace {
				report(m, "replaces %s: go install and go run with a version refuse a module with replace lines (go.work covers development)", r.Old.Path)
			}
		}
	}
	if len(seen) > 1 {
		var vs []string
		for _, s := range seen {
			vs = append(vs, s)
		}
		slices.Sort(vs)
		problems = append(problems, "the published modules require their siblings at different versions: "+strings.Join(vs, "; "))
	}
	return problems
}

// replacement is the directory or module f replaces every version of path
// with, "" when none.
func replacement(f *modfile.File, path string) string {
	for _, r := range f.Replace {
		if r.Old.Path == path && r.Old.Version == "" {
			if r.New.Version != "" {
				return r.New.Path + " " + r.New.Version
			}
			return r.New.Path
		}
	}
	return ""
}
