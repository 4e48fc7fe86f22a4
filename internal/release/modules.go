package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// published are the directories of the modules a release tags, relative to
// the repository's root. A module go.work lists must be here or in devOnly.
var published = []string{
	".",
	"generator",
	"runtime/redisstore",
	"runtime/sqlstore",
	"runtime/storeurl",
	"runtime/otelcircuit",
	"runtime/prommetrics",
	"cmd/circuitgen",
	"cmd/circuitctl",
}

// devOnly are the directories of the modules that are never tagged: they
// are built and tested from the checkout only.
var devOnly = []string{
	"bench",
	"examples",
	"testdata",
	"internal/fleetnemesis",
	"internal/release",
}

// A Module is one module of the repository.
type Module struct {
	Dir       string   // relative to the repository's root, slash-separated; "." for the root
	Path      string   // the module path
	Published bool     // tagged by a release (else dev-only)
	Command   bool     // a command module, under cmd/: no replace lines
	Requires  []string // the module paths of the siblings it requires
	data      []byte   // the go.mod file as read
	file      *modfile.File
}

// load reads the go.mod of every module go.work lists under root, and fails
// when go.work and the lists published and devOnly disagree.
func load(root string) ([]*Module, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	work, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	var mods []*Module
	seen := map[string]bool{}
	for _, u := range work.Use {
		dir := path.Clean(filepath.ToSlash(u.Path))
		seen[dir] = true
		m := &Module{Dir: dir, Published: slices.Contains(published, dir), Command: strings.HasPrefix(dir, "cmd/")}
		if !m.Published && !slices.Contains(devOnly, dir) {
			return nil, fmt.Errorf("go.work uses %s, which internal/release lists neither as published nor as dev-only", dir)
		}
		file := filepath.Join(root, dir, "go.mod")
		if m.data, err = os.ReadFile(file); err != nil {
			return nil, err
		}
		if m.file, err = modfile.Parse(file, m.data, nil); err != nil {
			return nil, err
		}
		if m.file.Module == nil {
			return nil, fmt.Errorf("%s: no module line", file)
		}
		m.Path = m.file.Module.Mod.Path
		mods = append(mods, m)
	}
	for _, dir := range append(slices.Clone(published), devOnly...) {
		if !seen[dir] {
			return nil, fmt.Errorf("internal/release lists %s, which go.work does not use", dir)
		}
	}
	byPath := paths(mods)
	for _, m := range mods {
		for _, r := range m.file.Require {
			if byPath[r.Mod.Path] != nil {
				m.Requires = append(m.Requires, r.Mod.Path)
			}
		}
	}
	return mods, nil
}

// paths indexes mods by module path.
func paths(mods []*Module) map[string]*Module {
	byPath := make(map[string]*Module, len(mods))
	for _, m := range mods {
		byPath[m.Path] = m
	}
	return byPath
}

// order returns the published modules of mods in the order their tags are
// pushed: libraries before commands, and within each, a module after every
// sibling it requires (by depth in the requirement graph), then by
// directory. So the root module comes first, then the generator, the stores
// and the observers, then storeurl, then the commands.
func order(mods []*Module) []*Module {
	byPath := paths(mods)
	depth := map[string]int{}
	var depthOf func(m *Module, visiting map[string]bool) int
	depthOf = func(m *Module, visiting map[string]bool) int {
		if d, ok := depth[m.Path]; ok {
			return d
		}
		if visiting[m.Path] {
			return 0 // a cycle, which go.mod allows; check reports nothing of it
		}
		visiting[m.Path] = true
		d := 0
		for _, p := range m.Requires {
			if s := byPath[p]; s != nil && s != m {
				d = max(d, depthOf(s, visiting)+1)
			}
		}
		depth[m.Path] = d
		return d
	}
	var out []*Module
	for _, m := range mods {
		if m.Published {
			depthOf(m, map[string]bool{})
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Command != b.Command {
			return !a.Command
		}
		if depth[a.Path] != depth[b.Path] {
			return depth[a.Path] < depth[b.Path]
		}
		return a.Dir < b.Dir
	})
	return out
}
