package generator

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRuntimeVersionMarker checks that a generated file does not compile
// against a runtime that lacks the version marker it references, and that
// the compiler's message leads to the comment saying what to update.
func TestRuntimeVersionMarker(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(goldenDir, "basic"))
	if err != nil {
		t.Fatal(err)
	}
	outs, err := Generate(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	gen := filepath.Join(t.TempDir(), "guarded_gen.go")
	if err := os.WriteFile(gen, outs[0].Content, 0o600); err != nil {
		t.Fatal(err)
	}
	version, err := filepath.Abs("../runtime/circuit/version.go")
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(t.TempDir(), "version.go")
	// The runtime of contract version 2, before Quiet.Rejected: its markers, not 3's.
	if err := os.WriteFile(old, []byte("package circuit\n\nconst SupportPackageIsVersion1, SupportPackageIsVersion2 = true, true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	build := func(replace map[string]string) (string, error) {
		data, _ := json.Marshal(map[string]any{"Replace": replace})
		ov := filepath.Join(t.TempDir(), "overlay.json")
		if err := os.WriteFile(ov, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "build", "-overlay="+ov, "./testdata/golden/basic")
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := build(map[string]string{outs[0].Path: gen}); err != nil {
		t.Fatalf("the generated file does not build against this runtime: %v\n%s", err, out)
	}
	out, err := build(map[string]string{outs[0].Path: gen, version: old})
	if err == nil {
		t.Fatal("the generated file builds against a runtime without circuit.SupportPackageIsVersion3")
	}
	if !strings.Contains(out, "undefined: circuit.SupportPackageIsVersion3") {
		t.Errorf("go build's message does not name the marker:\n%s", out)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(outs[0].Content), "//", "")), " ")
	if want := "the runtime and the generator differ: update github.com/circuitgen/circuitgen or run the circuitgen that matches it."; !strings.Contains(text, want) {
		t.Errorf("the generated file does not say %q:\n%s", want, outs[0].Content)
	}
}
