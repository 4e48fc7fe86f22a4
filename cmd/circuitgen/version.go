package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// runVersion prints the versions of circuitgen and of the generator it
// runs, as the build recorded them: "(devel)" for a build in this
// repository.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: circuitgen version")
		return 2
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(stderr, "circuitgen: no build information in this binary")
		return 1
	}
	versions := map[string]string{bi.Main.Path: bi.Main.Version}
	for _, d := range bi.Deps {
		versions[d.Path] = d.Version
	}
	of := func(path string) string {
		if v := versions[path]; v != "" {
			return v
		}
		return "(devel)"
	}
	fmt.Fprintf(stdout, "circuitgen %s (generator %s, %s)\n",
		of("github.com/circuitgen/circuitgen/cmd/circuitgen"), of("github.com/circuitgen/circuitgen/generator"), bi.GoVersion)
	return 0
}
