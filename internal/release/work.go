package main

import (
	"fmt"
	"slices"

	"golang.org/x/mod/modfile"
)

// rewriteWork returns the go.work file data (file names it in errors) with
// a replace line for each published module of mods at version, to its
// directory, in place of any other replace line for a published module.
//
// In workspace mode the go command still reads the go.mod of a workspace
// module at each version another workspace module requires, unless a
// replace line covers it; without these lines it would ask a module proxy
// for cmd/circuitctl's requirement runtime/storeurl@version before that
// version is published. go.work may not replace a workspace module at every
// version, hence one line per module at the version.
func rewriteWork(file string, data []byte, mods []*Module, version string) ([]byte, error) {
	f, err := modfile.ParseWork(file, data, nil)
	if err != nil {
		return nil, err
	}
	byPath := paths(mods)
	for _, r := range slices.Clone(f.Replace) {
		if m := byPath[r.Old.Path]; m != nil && m.Published {
			if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return nil, fmt.Errorf("%s: %v", file, err)
			}
		}
	}
	for _, m := range order(mods) {
		if err := f.AddReplace(m.Path, version, relDir(".", m.Dir), ""); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
	}
	f.Cleanup()
	return modfile.Format(f.Syntax), nil
}

// checkWork returns what is missing from the go.work file data for
// development at version: a replace line for each published module at
// version, to its directory (see rewriteWork).
func checkWork(file string, data []byte, mods []*Module, version string) []string {
	f, err := modfile.ParseWork(file, data, nil)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, m := range order(mods) {
		want := relDir(".", m.Dir)
		found := false
		for _, r := range f.Replace {
			found = found || r.Old.Path == m.Path && r.Old.Version == version && r.New.Path == want && r.New.Version == ""
		}
		if !found {
			problems = append(problems, fmt.Sprintf("%s: no line replace %s %s => %s (else the workspace asks a module proxy for it)", file, m.Path, version, want))
		}
	}
	return problems
}

// requiredVersion is the version at which the published modules of mods
// require their siblings (the first one found), "" when none does.
func requiredVersion(mods []*Module) string {
	byPath := paths(mods)
	for _, m := range mods {
		if !m.Published {
			continue
		}
		for _, r := range m.file.Require {
			if byPath[r.Mod.Path] != nil {
				return r.Mod.Version
			}
		}
	}
	return ""
}
