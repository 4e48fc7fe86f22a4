package load

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// golden returns the absolute path of a golden case of the generator.
func golden(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadsWhatTheFilesUse checks which files of a target are read: its
// own, and the outputs of other generators that declare what they use
// (types, a method of their type); not another generator's output they do
// not use, nor a previous output of ours.
func TestReadsWhatTheFilesUse(t *testing.T) {
	dir := golden(t, "othergenerators")
	prog, err := Parse(dir, []string{"."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.TypeCheck(nil, []string{"API", "LocalError"}); err != nil {
		t.Fatal(err)
	}
	if len(prog.Roots) != 1 {
		t.Fatalf("%d roots, want 1", len(prog.Roots))
	}
	r := prog.Roots[0]
	var read []string
	for _, f := range r.Syntax {
		read = append(read, filepath.Base(prog.Fset.Position(f.Pos()).Filename))
	}
	slices.Sort(read)
	if want := []string{"api.go", "api.pb.go", "errors_gen.go"}; !slices.Equal(read, want) {
		t.Errorf("files read: %v, want %v", read, want)
	}
	if r.Types.Scope().Lookup("APIMock") != nil {
		t.Error("the unused mock was type-checked")
	}
	for _, e := range r.Errors {
		t.Errorf("unexpected problem: %s: %s", e.Pos, e.Msg)
	}
}

// TestStaleOutputNotRead checks that a broken previous output of ours is
// not parsed: the package has no parse error.
func TestStaleOutputNotRead(t *testing.T) {
	prog, err := Parse(golden(t, "stale"), []string{"."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.TypeCheck(nil, nil); err != nil {
		t.Fatal(err)
	}
	r := prog.Roots[0]
	if !r.Ours[filepath.Join(golden(t, "stale"), "guarded_gen.go")] {
		t.Errorf("guarded_gen.go not recognized as ours: %v", r.Ours)
	}
	for _, e := range r.Errors {
		if !e.Type {
			t.Errorf("problem outside the type checker: %s: %s", e.Pos, e.Msg)
		}
	}
}

// TestTargetNotCompiled checks that loading never compiles a target
// package (go list -export would, a stale output of its included): every
// tool the go command runs goes through a -toolexec wrapper that records
// it, and no compile of the target is recorded.
func TestTargetNotCompiled(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the recording wrapper is a shell script")
	}
	tmp := t.TempDir()
	log := filepath.Join(tmp, "tools.log")
	wrapper := filepath.Join(tmp, "record")
	script := "#!/bin/sh\necho \"$@\" >> " + log + "\nexec \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOFLAGS", "-toolexec="+wrapper)
	dir := golden(t, "stale")
	prog, err := Parse(dir, []string{"."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.TypeCheck(nil, nil); err != nil {
		t.Fatal(err)
	}
	if prog.Roots[0].Types == nil || prog.Roots[0].Types.Scope().Lookup("API") == nil {
		t.Fatal("the target was not type-checked")
	}
	data, _ := os.ReadFile(log)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "/compile") && strings.Contains(line, "-p "+prog.Roots[0].PkgPath+" ") {
			t.Errorf("the target was compiled: %s", line)
		}
	}
	// The control: go list -export compiles it, through the wrapper.
	cmd := exec.Command("go", "list", "-export", "-e", ".")
	cmd.Dir = dir
	_ = cmd.Run()
	data, _ = os.ReadFile(log)
	if !strings.Contains(string(data), "-p "+prog.Roots[0].PkgPath+" ") {
		t.Errorf("the wrapper did not record go list -export's compile of the target: %s", data)
	}
}
