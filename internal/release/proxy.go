package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"

	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// buildProxy writes under dir, for every published module of mods at
// version, the files a module proxy serves (@v/list, and the version's
// .info, .mod and .zip), from git revision rev of the repository at root.
// GOPROXY=file://DIR then serves them. An existing @v/list keeps its other
// versions.
func buildProxy(root, rev, dir string, mods []*Module, version string, stdout io.Writer) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	when, err := git(root, "log", "-1", "--format=%cI", rev)
	if err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(when))
	if err != nil {
		return fmt.Errorf("the commit time of %s: %v", rev, err)
	}
	for _, m := range order(mods) {
		if err := proxyModule(root, rev, dir, m, version, t.UTC()); err != nil {
			return fmt.Errorf("%s: %v", m.Path, err)
		}
		fmt.Fprintf(stdout, "%s %s\n", m.Path, version)
	}
	return nil
}

// proxyModule writes module m's files at version under dir.
func proxyModule(root, rev, dir string, m *Module, version string, t time.Time) error {
	escPath, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	gomod := "go.mod"
	subdir := ""
	if m.Dir != "." {
		gomod = m.Dir + "/go.mod"
		subdir = m.Dir + "/"
	}
	mod, err := git(root, "show", rev+":"+gomod)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, escVersion+".mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	info, err := infoJSON(version, t)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, escVersion+".info"), info, 0o644); err != nil {
		return err
	}
	var z bytes.Buffer
	if err := zip.CreateFromVCS(&z, module.Version{Path: m.Path, Version: version}, root, rev, subdir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, escVersion+".zip"), z.Bytes(), 0o644); err != nil {
		return err
	}
	listFile := filepath.Join(vdir, "list")
	old, err := os.ReadFile(listFile)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(listFile, []byte(addVersion(string(old), version)), 0o644)
}

// infoJSON is the .info file of version, committed at t.
func infoJSON(version string, t time.Time) ([]byte, error) {
	return json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, t})
}

// addVersion returns the @v/list text list with version in it, one version
// a line in semantic-version order.
func addVersion(list, version string) string {
	vs := strings.Fields(list)
	found := false
	for _, v := range vs {
		found = found || v == version
	}
	if !found {
		vs = append(vs, version)
	}
	semver.Sort(vs)
	return strings.Join(vs, "\n") + "\n"
}

// git runs git with args in dir and returns its standard output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
