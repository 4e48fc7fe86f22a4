package main

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// testModules returns modules as load would make them from go.mod texts by
// directory, published when pub lists the directory.
func testModules(t *testing.T, gomods map[string]string, pub ...string) []*Module {
	t.Helper()
	var mods []*Module
	for dir, text := range gomods {
		f, err := modfile.Parse(dir+"/go.mod", []byte(text), nil)
		if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, &Module{Dir: dir, Path: f.Module.Mod.Path, Published: slices.Contains(pub, dir),
			Command: strings.HasPrefix(dir, "cmd/"), data: []byte(text), file: f})
	}
	byPath := paths(mods)
	for _, m := range mods {
		for _, r := range m.file.Require {
			if byPath[r.Mod.Path] != nil {
				m.Requires = append(m.Requires, r.Mod.Path)
			}
		}
	}
	slices.SortFunc(mods, func(a, b *Module) int { return strings.Compare(a.Dir, b.Dir) })
	return mods
}

const zero = "v0.0.0-00010101000000-000000000000"

// repo is a small repository of the real one's shape, at the zero
// pseudo-version.
var repo = map[string]string{
	".":         "module example.com/c\n\ngo 1.26.0\n",
	"generator": "module example.com/c/generator\n\ngo 1.26.0\n\nrequire example.com/c " + zero + "\n\nreplace example.com/c => ..\n",
	"store":     "module example.com/c/store\n\ngo 1.26.0\n\nrequire example.com/c " + zero + "\n\nreplace example.com/c => ..\n",
	"storeurl":  "module example.com/c/storeurl\n\ngo 1.26.0\n\nrequire (\n\texample.com/c " + zero + "\n\texample.com/c/store " + zero + "\n)\n\nreplace example.com/c => ..\n\nreplace example.com/c/store => ../store\n",
	"cmd/gen": "module example.com/c/cmd/gen\n\ngo 1.26.0\n\nrequire example.com/c/generator " + zero + "\n\nrequire example.com/c " + zero + " // indirect\n\n" +
		"replace (\n\texample.com/c => ../..\n\texample.com/c/generator => ../../generator\n)\n",
	"cmd/ctl":  "module example.com/c/cmd/ctl\n\ngo 1.26.0\n\nrequire example.com/c/storeurl " + zero + "\n",
	"examples": "module example.com/c/examples\n\ngo 1.26.0\n\nrequire (\n\texample.com/c " + zero + "\n\texample.com/c/cmd/gen " + zero + " // indirect\n)\n\nreplace example.com/c => ..\n",
}

// published are repo's published modules.
var repoPublished = []string{".", "generator", "store", "storeurl", "cmd/gen", "cmd/ctl"}

func TestOrder(t *testing.T) {
	tests := []struct {
		name  string
		mods  map[string]string
		pub   []string
		order []string
	}{
		{"repo", repo, repoPublished, []string{".", "generator", "store", "storeurl", "cmd/gen", "cmd/ctl"}},
		{"dev-only modules are left out", repo, []string{".", "cmd/gen"}, []string{".", "cmd/gen"}},
		{"a command requiring nothing still comes last", map[string]string{
			"cmd/a": "module example.com/c/cmd/a\n",
			"z":     "module example.com/c/z\n\nrequire example.com/c/y v0.1.0\n",
			"y":     "module example.com/c/y\n",
		}, []string{"cmd/a", "y", "z"}, []string{"y", "z", "cmd/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, m := range order(testModules(t, tt.mods, tt.pub...)) {
				got = append(got, m.Dir)
			}
			if !slices.Equal(got, tt.order) {
				t.Errorf("order = %v, want %v", got, tt.order)
			}
		})
	}
}

func TestTags(t *testing.T) {
	got := tags(testModules(t, repo, repoPublished...), "v0.2.0")
	want := []string{"v0.2.0", "generator/v0.2.0", "store/v0.2.0", "storeurl/v0.2.0", "cmd/gen/v0.2.0", "cmd/ctl/v0.2.0"}
	if !slices.Equal(got, want) {
		t.Errorf("tags = %v, want %v", got, want)
	}
}

func TestRewrite(t *testing.T) {
	tests := []struct {
		dir  string
		want string
	}{
		{".", repo["."]},
		{"generator", "module example.com/c/generator\n\ngo 1.26.0\n\nrequire example.com/c v0.1.0\n\nreplace example.com/c => ..\n"},
		{"storeurl", "module example.com/c/storeurl\n\ngo 1.26.0\n\nrequire (\n\texample.com/c v0.1.0\n\texample.com/c/store v0.1.0\n)\n\nreplace example.com/c => ..\n\nreplace example.com/c/store => ../store\n"},
		// A command loses its replace lines; the indirect comment stays.
		{"cmd/gen", "module example.com/c/cmd/gen\n\ngo 1.26.0\n\nrequire example.com/c/generator v0.1.0\n\nrequire example.com/c v0.1.0 // indirect\n"},
		// A dev-only module gets the replace line it lacked.
		{"examples", "module example.com/c/examples\n\ngo 1.26.0\n\nrequire (\n\texample.com/c v0.1.0\n\texample.com/c/cmd/gen v0.1.0 // indirect\n)\n\nreplace example.com/c => ..\n\nreplace example.com/c/cmd/gen => ../cmd/gen\n"},
	}
	mods := testModules(t, repo, repoPublished...)
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			m := paths(mods)[map[string]string{".": "example.com/c", "generator": "example.com/c/generator", "storeurl": "example.com/c/storeurl",
				"cmd/gen": "example.com/c/cmd/gen", "examples": "example.com/c/examples"}[tt.dir]]
			got, err := rewrite(tt.dir+"/go.mod", m.data, m, mods, "v0.1.0")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("rewrite:\n%s\nwant:\n%s", got, tt.want)
			}
			again, err := rewrite(tt.dir+"/go.mod", got, m, mods, "v0.1.0")
			if err != nil || string(again) != string(got) {
				t.Errorf("a second rewrite changed the file: %v\n%s", err, again)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	set := func(mods map[string]string, version string) map[string]string {
		out := map[string]string{}
		ms := testModules(t, mods, repoPublished...)
		for _, m := range ms {
			data, err := rewrite(m.Dir+"/go.mod", m.data, m, ms, version)
			if err != nil {
				t.Fatal(err)
			}
			out[m.Dir] = string(data)
		}
		return out
	}
	released := set(repo, "v0.1.0")
	mixed := set(repo, "v0.1.0")
	mixed["generator"] = strings.Replace(mixed["generator"], "v0.1.0", "v0.0.9", 1)
	replacing := set(repo, "v0.1.0")
	replacing["cmd/ctl"] += "\nreplace example.com/c/storeurl => ../../storeurl\n"
	unreplaced := set(repo, "v0.1.0")
	unreplaced["storeurl"] = strings.Replace(unreplaced["storeurl"], "replace example.com/c/store => ../store\n", "", 1)
	tests := []struct {
		name    string
		mods    map[string]string
		version string
		want    []string // a substring of each problem, in order
	}{
		{"released", released, "v0.1.0", nil},
		{"released, any version", released, "", nil},
		{"another version", released, "v0.2.0", []string{"cmd/ctl/go.mod: requires example.com/c/storeurl v0.1.0, not v0.2.0",
			"cmd/gen/go.mod: requires example.com/c/generator", "cmd/gen/go.mod: requires example.com/c v0.1.0", "generator/go.mod", "store/go.mod",
			"storeurl/go.mod: requires example.com/c v0.1.0", "storeurl/go.mod: requires example.com/c/store v0.1.0"}},
		{"zero", repo, "", []string{"cmd/ctl/go.mod: requires example.com/c/storeurl at the zero pseudo-version",
			"cmd/gen/go.mod: requires example.com/c/generator at the zero", "cmd/gen/go.mod: requires example.com/c at the zero",
			"cmd/gen/go.mod: replaces example.com/c:", "cmd/gen/go.mod: replaces example.com/c/generator:",
			"generator/go.mod: requires example.com/c at the zero", "store/go.mod: requires example.com/c at the zero",
			"storeurl/go.mod: requires example.com/c at the zero", "storeurl/go.mod: requires example.com/c/store at the zero"}},
		{"versions disagree", mixed, "", []string{"different versions: "}},
		{"a command replaces", replacing, "", []string{"cmd/ctl/go.mod: replaces example.com/c/storeurl"}},
		{"a library does not replace", unreplaced, "", []string{`storeurl/go.mod: replaces example.com/c/store with "", want "../store"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(testModules(t, tt.mods, repoPublished...), tt.version)
			if len(got) != len(tt.want) {
				t.Fatalf("check = %d problems, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestRelDir(t *testing.T) {
	tests := []struct{ from, to, want string }{
		{"generator", ".", ".."},
		{"cmd/circuitgen", ".", "../.."},
		{"cmd/circuitgen", "generator", "../../generator"},
		{"runtime/storeurl", "runtime/redisstore", "../../runtime/redisstore"},
		{".", "generator", "./generator"},
	}
	for _, tt := range tests {
		if got := relDir(tt.from, tt.to); got != tt.want {
			t.Errorf("relDir(%q, %q) = %q, want %q", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestAddVersion(t *testing.T) {
	tests := []struct{ list, version, want string }{
		{"", "v0.1.0", "v0.1.0\n"},
		{"v0.1.0\n", "v0.1.0", "v0.1.0\n"},
		{"v0.10.0\nv0.2.0\n", "v0.1.0", "v0.1.0\nv0.2.0\nv0.10.0\n"},
	}
	for _, tt := range tests {
		if got := addVersion(tt.list, tt.version); got != tt.want {
			t.Errorf("addVersion(%q, %q) = %q, want %q", tt.list, tt.version, got, tt.want)
		}
	}
}

func TestRewriteWork(t *testing.T) {
	mods := testModules(t, repo, repoPublished...)
	tests := []struct {
		name, work string
	}{
		{"none yet", "go 1.26.0\n\nuse (\n\t.\n\t./cmd/gen\n)\n"},
		{"another version", "go 1.26.0\n\nuse (\n\t.\n\t./cmd/gen\n)\n\nreplace example.com/c v0.0.9 => .\n\nreplace example.com/other => ../other\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if problems := checkWork("go.work", []byte(tt.work), mods, "v0.1.0"); len(problems) != len(repoPublished) {
				t.Errorf("checkWork before rewriteWork = %d problems, want %d", len(problems), len(repoPublished))
			}
			got, err := rewriteWork("go.work", []byte(tt.work), mods, "v0.1.0")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"replace example.com/c v0.1.0 => .\n", "replace example.com/c/storeurl v0.1.0 => ./storeurl\n", "replace example.com/c/cmd/ctl v0.1.0 => ./cmd/ctl\n"} {
				if !strings.Contains(string(got), want) {
					t.Errorf("rewriteWork lacks %q:\n%s", want, got)
				}
			}
			if strings.Contains(string(got), "v0.0.9") {
				t.Errorf("rewriteWork kept the replace line of another version:\n%s", got)
			}
			if strings.Contains(tt.work, "other") && !strings.Contains(string(got), "example.com/other => ../other") {
				t.Errorf("rewriteWork dropped the replace line of a module not the repository's:\n%s", got)
			}
			if problems := checkWork("go.work", got, mods, "v0.1.0"); len(problems) != 0 {
				t.Errorf("checkWork after rewriteWork: %v", problems)
			}
		})
	}
}
