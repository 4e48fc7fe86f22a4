package generator

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// goldenDir holds one folder a case: an input package, an optional
// circuitgen.yaml, and either <output>.golden or errors.golden, and
// warnings.golden when the run warns.
const goldenDir = "../testdata/golden"

func TestGolden(t *testing.T) {
	overlay, vetDirs := goldenCases(t)
	t.Run("vet", func(t *testing.T) {
		if len(vetDirs) == 0 {
			t.Fatal("no golden output")
		}
		vetOverlay(t, "..", overlay, vetDirs)
		shadowVet(t, "..", overlay, vetDirs)
	})
}

// goldenCases runs every case of goldenDir as a subtest and returns what
// vetting the golden outputs takes: an overlay from each case's output file
// to its golden, and the directories of the cases that have outputs.
func goldenCases(t *testing.T) (overlay map[string]string, vetDirs []string) {
	cases, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	overlay = map[string]string{}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		dir, err := filepath.Abs(filepath.Join(goldenDir, c.Name()))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(c.Name(), func(t *testing.T) {
			cfg := Config{Dir: dir}
			if _, err := os.Stat(filepath.Join(dir, "circuitgen.yaml")); err == nil {
				cfg.Manifest = "circuitgen.yaml"
			}
			var warnings strings.Builder
			cfg.Warnings = &warnings
			outs, err := Generate(cfg)
			errFile := filepath.Join(dir, "errors.golden")
			warnFile := filepath.Join(dir, "warnings.golden")
			if warnings.Len() > 0 {
				compareGolden(t, warnFile, []byte(warnings.String()))
			} else if _, err := os.Stat(warnFile); err == nil {
				if *update {
					os.Remove(warnFile)
				} else {
					t.Errorf("no warnings, want those of %s", warnFile)
				}
			}
			if err != nil {
				var list ErrorList
				if !errors.As(err, &list) {
					t.Fatalf("Generate: %v", err)
				}
				compareGolden(t, errFile, []byte(err.Error()+"\n"))
				// An output golden beside errors.golden is never compared.
				if outs, _ := filepath.Glob(filepath.Join(dir, "*.go.golden")); len(outs) > 0 {
					t.Errorf("%s fails, so its output goldens %v are stale: remove them", c.Name(), outs)
				}
				return
			}
			if _, err := os.Stat(errFile); err == nil && !*update {
				t.Fatalf("Generate succeeded, want the errors of %s", errFile)
			}
			for _, o := range outs {
				golden := o.Path + ".golden"
				compareGolden(t, golden, o.Content)
				overlay[o.Path] = golden
			}
			vetDirs = append(vetDirs, "./"+filepath.ToSlash(filepath.Join("testdata/golden", c.Name())))
		})
	}
	return overlay, vetDirs
}

// vetOverlay runs go vet, with flags, on dirs, seen from dir, with files
// replaced as overlay says, so that generated files need not be on disk.
func vetOverlay(t *testing.T, dir string, overlay map[string]string, dirs []string, flags ...string) {
	t.Helper()
	data, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(ov, data, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"vet", "-overlay=" + ov}, flags...), dirs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the golden outputs: %v\n%s", err, out)
	}
}

// compareGolden compares got with the golden file, or rewrites it with
// -update.
func compareGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./generator -run TestGolden -update)", err)
	}
	if d := diff(filepath.Base(golden), "got", want, got); d != "" {
		t.Errorf("output differs from %s:\n%s", golden, strings.TrimRight(d, "\n"))
	}
}

// TestCommittedOutputIsFresh checks the generated client the behaviour
// tests drive, as circuitgen -check does in CI.
func TestCommittedOutputIsFresh(t *testing.T) {
	dir, err := filepath.Abs("../testdata/fakeclient")
	if err != nil {
		t.Fatal(err)
	}
	outs, err := Generate(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var diff strings.Builder
	stale, err := Check(outs, dir, &diff)
	if err != nil {
		t.Fatal(err)
	}
	if stale {
		t.Errorf("testdata/fakeclient is stale: run go generate in testdata/fakeclient\n%s", diff.String())
	}
}
