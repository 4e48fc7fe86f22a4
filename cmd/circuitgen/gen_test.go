package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFromEnvironment checks that CIRCUITGEN_CHECK=1 acts as -check,
// as .ci/stale runs every //go:generate line.
func TestCheckFromEnvironment(t *testing.T) {
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata")
	t.Cleanup(func() { os.Remove(abs) }) // only when empty
	chdir(t, writePackage(t, apiSrc))
	tests := []struct {
		env      string
		wantCode int
		wantOut  string
	}{
		{"1", 1, "+++ guarded_gen.go (generated)"},
		{"true", 1, "+++ guarded_gen.go (generated)"},
		{"maybe", 2, ""},
	}
	for _, tt := range tests {
		t.Setenv(checkEnv, tt.env)
		var stdout, stderr bytes.Buffer
		if code := run(nil, &stdout, &stderr); code != tt.wantCode || !strings.Contains(stdout.String(), tt.wantOut) {
			t.Fatalf("%s=%s: exit %d, stdout %q, stderr %q", checkEnv, tt.env, code, stdout.String(), stderr.String())
		}
		if _, err := os.Stat("guarded_gen.go"); !os.IsNotExist(err) {
			t.Fatalf("%s=%s wrote the output", checkEnv, tt.env)
		}
	}
	t.Setenv(checkEnv, "0")
	var stdout, stderr bytes.Buffer
	if code := run(nil, &stdout, &stderr); code != 0 {
		t.Fatalf("%s=0: exit %d: %s", checkEnv, code, stderr.String())
	}
	if _, err := os.Stat("guarded_gen.go"); err != nil {
		t.Fatalf("%s=0 did not generate: %v", checkEnv, err)
	}
}
