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

// TestCheckPatterns checks that -check accepts ./... and import paths and
// checks every package they name, with the previous outputs present, as CI
// runs it from a module's root.
func TestCheckPatterns(t *testing.T) {
	root, err := os.MkdirTemp(testdata(t), "multi")
	if err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.Abs(root)
	t.Cleanup(func() { os.RemoveAll(root) })
	for _, p := range []string{"a", "b"} {
		src := strings.Replace(apiSrc, "package clitest", "package "+p, 1)
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p, "api.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chdir(t, root)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"./..."}, &stdout, &stderr); code != 0 {
		t.Fatalf("gen ./...: exit %d: %s", code, stderr.String())
	}
	importPath := "github.com/circuitgen/circuitgen/cmd/circuitgen/testdata/" + filepath.Base(root) + "/a"
	for _, args := range [][]string{{"-check", "./..."}, {"-check", importPath, "./b"}} {
		stdout.Reset()
		stderr.Reset()
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v on fresh outputs: exit %d, stdout %q, stderr %q", args, code, stdout.String(), stderr.String())
		}
	}
	src, _ := os.ReadFile(filepath.Join(root, "b", "api.go"))
	os.WriteFile(filepath.Join(root, "b", "api.go"), bytes.Replace(src, []byte("statuses=503"), []byte("statuses=502"), 1), 0o644)
	stdout.Reset()
	if code := run([]string{"-check", "./..."}, &stdout, &stderr); code != 1 || !strings.Contains(stdout.String(), "b/guarded_gen.go (generated)") || strings.Contains(stdout.String(), "a/guarded_gen.go") {
		t.Fatalf("-check ./... with b stale: exit %d, stdout %q; want 1 and a diff of b only", code, stdout.String())
	}
}

// TestCheckSeesManifests checks that -check over patterns reads the
// circuitgen.yaml beside each package it matches: a manifest's stale
// output fails ./..., an import path and the package's directory alike,
// with the manifest named nowhere on the command line.
func TestCheckSeesManifests(t *testing.T) {
	root, err := os.MkdirTemp(testdata(t), "manifests")
	if err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.Abs(root)
	t.Cleanup(func() { os.RemoveAll(root) })
	health := filepath.Join(root, "health")
	if err := os.MkdirAll(health, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := "version: 1\ninterfaces:\n  - source: net/http.RoundTripper\n    circuit: upstream\n    statuses: [502, 503, 504]\n"
	if err := os.WriteFile(filepath.Join(health, "doc.go"), []byte("// Package health guards a transport.\npackage health\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(health, "circuitgen.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	chdir(t, root)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"./..."}, &stdout, &stderr); code != 0 {
		t.Fatalf("gen ./...: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(health, "guarded_gen.go")); err != nil {
		t.Fatalf("gen ./... did not write the manifest's output: %v", err)
	}
	importPath := "github.com/circuitgen/circuitgen/cmd/circuitgen/testdata/" + filepath.Base(root) + "/health"
	patterns := [][]string{{"./..."}, {"./health"}, {importPath}}
	for _, p := range patterns {
		stdout.Reset()
		if code := run(append([]string{"-check"}, p...), &stdout, &stderr); code != 0 {
			t.Fatalf("-check %v on a fresh output: exit %d, stdout %q, stderr %q", p, code, stdout.String(), stderr.String())
		}
	}
	stale := strings.Replace(manifest, "[502, 503, 504]", "[503]", 1)
	if err := os.WriteFile(filepath.Join(health, "circuitgen.yaml"), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range patterns {
		stdout.Reset()
		if code := run(append([]string{"-check"}, p...), &stdout, &stderr); code != 1 || !strings.Contains(stdout.String(), "health/guarded_gen.go (generated)") {
			t.Fatalf("-check %v with the manifest changed: exit %d, stdout %q; want 1 and the diff", p, code, stdout.String())
		}
	}
}

// TestGenWarnsOfSelection checks that a selection that can match nothing
// the method returns (HTTP statuses on a client that carries none) is a
// warning on standard error where the file is written, not an error, and
// that -check repeats no warning.
func TestGenWarnsOfSelection(t *testing.T) {
	chdir(t, writePackage(t, apiSrc))
	var stdout, stderr bytes.Buffer
	if code := run(nil, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "api.go:5:41: warning: circuit api can never open: statuses= selects HTTP statuses") {
		t.Fatalf("gen: exit %d, stderr %q; want 0 and the warning", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"-check"}, &stdout, &stderr); code != 0 || stderr.Len() > 0 {
		t.Fatalf("-check: exit %d, stderr %q; want 0 and nothing", code, stderr.String())
	}
}

// TestReplacesPreviousOutput checks that a previous output of ours, stale
// or broken in a way the go command sees, is never a stop: -check reports
// it stale and a run replaces it, in the package its directory now holds;
// and that a file circuitgen did not write is refused.
func TestReplacesPreviousOutput(t *testing.T) {
	const header = "// Code generated by circuitgen. DO NOT EDIT.\n\n"
	renamed := strings.Replace(apiSrc, "package clitest", "package payments", 1)
	tests := []struct {
		name string
		// file and src replace api.go after the first run; prev, when
		// set, replaces its guarded_gen.go.
		file, src, prev string
		wantPkg         string // the package of the new output
		wantErr         string // the error instead, when the run refuses
	}{
		{name: "package renamed", file: "api.go", src: renamed, wantPkg: "payments"},
		{name: "package renamed, output first", file: "service.go", src: renamed, wantPkg: "payments"},
		{name: "package clause of the output", file: "api.go", src: apiSrc, prev: header + "package old\n", wantPkg: "clitest"},
		{name: "empty", file: "api.go", src: apiSrc, prev: "\x00", wantPkg: "clitest"},
		{name: "blank", file: "api.go", src: apiSrc, prev: "\n\n", wantPkg: "clitest"},
		{name: "truncated in the imports", file: "api.go", src: apiSrc, prev: header + "package clitest\n\nimport (\n\t\"con", wantPkg: "clitest"},
		{name: "conflict markers in the imports", file: "api.go", src: apiSrc, prev: header + "package clitest\n\nimport (\n<<<<<<< HEAD\n\t\"context\"\n=======\n", wantPkg: "clitest"},
		{name: "not ours", file: "api.go", src: apiSrc, prev: "package clitest\n\n// Hand-written.\n", wantErr: "guarded_gen.go:1:1: guarded_gen.go exists and was not written by circuitgen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chdir(t, writePackage(t, apiSrc))
			var stdout, stderr bytes.Buffer
			if code := run(nil, &stdout, &stderr); code != 0 {
				t.Fatalf("first run: exit %d: %s", code, stderr.String())
			}
			os.Remove("api.go")
			if err := os.WriteFile(tt.file, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.prev != "" {
				if err := os.WriteFile("guarded_gen.go", []byte(strings.TrimPrefix(tt.prev, "\x00")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadFile("guarded_gen.go")
			stdout.Reset()
			stderr.Reset()
			code := run([]string{"-check", "./..."}, &stdout, &stderr)
			if tt.wantErr != "" {
				if code != 1 || !strings.HasPrefix(stderr.String(), tt.wantErr) {
					t.Fatalf("-check: exit %d, stderr %q; want 1 and %q", code, stderr.String(), tt.wantErr)
				}
				if code := run(nil, &stdout, &stderr); code != 1 {
					t.Fatalf("run: exit %d, want 1", code)
				}
				if after, _ := os.ReadFile("guarded_gen.go"); !bytes.Equal(before, after) {
					t.Fatal("a file circuitgen did not write was overwritten")
				}
				return
			}
			if code != 1 || !strings.Contains(stdout.String(), "+++ guarded_gen.go (generated)") {
				t.Fatalf("-check ./...: exit %d, stdout %q, stderr %q; want 1 and a diff", code, stdout.String(), stderr.String())
			}
			stderr.Reset()
			if code := run(nil, &stdout, &stderr); code != 0 {
				t.Fatalf("run: exit %d: %s", code, stderr.String())
			}
			for _, f := range []string{"guarded_gen.go", "guarded_gen_test.go"} {
				if src, _ := os.ReadFile(f); !bytes.Contains(src, []byte("\npackage "+tt.wantPkg+"\n")) {
					t.Errorf("%s is not of package %s:\n%s", f, tt.wantPkg, src)
				}
			}
			stdout.Reset()
			if code := run([]string{"-check"}, &stdout, &stderr); code != 0 {
				t.Fatalf("-check after the run: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
			}
		})
	}
}
