package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// toolModules are the modules circuitgen may be built from: what
// `go get -tool` adds to a user's go.mod. The store drivers belong to
// circuitctl.
var toolModules = []string{
	"github.com/circuitgen/circuitgen",
	"github.com/circuitgen/circuitgen/cmd/circuitgen",
	"github.com/circuitgen/circuitgen/generator",
	"github.com/dave/jennifer",
	"golang.org/x/mod",
	"golang.org/x/sync",
	"golang.org/x/tools",
	"gopkg.in/yaml.v3",
}

// TestToolStaysLight checks that the command builds from the generator's
// modules only, on every platform.
func TestToolStaysLight(t *testing.T) {
	for _, platform := range []string{"linux/amd64", "darwin/arm64", "windows/amd64"} {
		goos, goarch, _ := strings.Cut(platform, "/")
		cmd := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=") // -race needs cgo
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", platform, err)
		}
		for _, mod := range strings.Fields(string(out)) {
			if !slices.Contains(toolModules, mod) {
				t.Errorf("%s: circuitgen depends on module %s; the generator's tool may use only %v", platform, mod, toolModules)
			}
		}
	}
}
