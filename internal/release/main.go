// Command release sets, checks and tags the versions of circuitgen's
// modules, and builds a file-based module proxy from a tagged tree.
//
// Usage, from the repository's root:
//
//	go run ./internal/release set vX.Y.Z
//	go run ./internal/release check [vX.Y.Z]
//	go run ./internal/release tags vX.Y.Z
//	go run ./internal/release proxy -o DIR [-rev REV] vX.Y.Z
//
// It works on the repository holding the working directory (the nearest
// go.work above it). The scripts run it as GOWORK=off go run -C
// internal/release . ARGS, which builds it whatever state go.work is in.
//
// set rewrites every module's requirements on its siblings to vX.Y.Z, and
// go.work's replace lines for the published modules at vX.Y.Z. check
// fails when a published module is not fit to tag. tags prints the tags to
// push, one a line, in the order to push them: the root module first, then
// the generator, the stores and the observers, then the commands. proxy
// writes, for every published module at vX.Y.Z as revision REV (HEAD by
// default) holds it, the files a GOPROXY=file://DIR serves. .ci/rehearse runs
// them all in a scratch clone and installs the result as a user would.
//
// A release: set the version, commit, check, tag the commit with what tags
// prints, and push the tags in that order.
//
// The shape set keeps and check enforces: a module requires each sibling at
// the version being released, never at the zero pseudo-version, since a
// user's build ignores the replace lines of a dependency's go.mod. The
// command modules (cmd/circuitgen, cmd/circuitctl) have no replace lines at
// all, since go install and go run with a version refuse a module that has
// any; go.work joins them to the checkout for development. The library
// modules and the dev-only ones keep a replace => ../.. line (a relative
// path) for each sibling they require, so that GOWORK=off go mod tidy and go
// test of one of them use the checkout before its siblings' version is
// published; a user's build ignores those lines. go.work replaces each
// published module at the version with its directory (see rewriteWork). The
// dev-only modules
// (bench, examples, testdata, internal/fleetnemesis and this one) are never
// tagged.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/semver"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageText is printed on a usage error.
const usageText = `usage:
  release set vX.Y.Z                      every module requires its siblings at vX.Y.Z
  release check [vX.Y.Z]                  the published modules are fit to tag (at vX.Y.Z)
  release tags vX.Y.Z                     the tags to push, in order
  release proxy -o DIR [-rev REV] vX.Y.Z  a file-based GOPROXY of the published modules
`

// run runs the subcommand args names in the repository's root (see
// findRoot) and returns the exit status: 0 on success, 1 on a failure, 2 on
// a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return 2
	}
	root, err := findRoot()
	if err != nil {
		fmt.Fprintln(stderr, "release:", err)
		return 1
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("release "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "proxy: the directory to write")
	rev := fs.String("rev", "HEAD", "proxy: the git revision to zip")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	version := fs.Arg(0)
	if fs.NArg() > 1 || (version == "" && cmd != "check") {
		fmt.Fprint(stderr, usageText)
		return 2
	}
	if version != "" && (!semver.IsValid(version) || semver.Canonical(version) != version || semver.Major(version) != "v0" && semver.Major(version) != "v1") {
		fmt.Fprintf(stderr, "release: %q is not a canonical v0 or v1 semantic version (vX.Y.Z)\n", version)
		return 2
	}
	mods, err := load(root)
	if err != nil {
		fmt.Fprintln(stderr, "release:", err)
		return 1
	}
	switch cmd {
	case "set":
		err = set(root, mods, version, stdout)
	case "check":
		problems := check(mods, version)
		if v := version; v != "" || len(problems) == 0 {
			if v == "" {
				v = requiredVersion(mods)
			}
			work, err := os.ReadFile(filepath.Join(root, "go.work"))
			if err != nil {
				fmt.Fprintln(stderr, "release:", err)
				return 1
			}
			problems = append(problems, checkWork("go.work", work, mods, v)...)
		}
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		if len(problems) > 0 {
			err = fmt.Errorf("%d problems", len(problems))
		}
	case "tags":
		for _, t := range tags(mods, version) {
			fmt.Fprintln(stdout, t)
		}
	case "proxy":
		if *out == "" {
			fmt.Fprint(stderr, usageText)
			return 2
		}
		err = buildProxy(root, *rev, *out, mods, version, stdout)
	default:
		fmt.Fprint(stderr, usageText)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "release:", err)
		return 1
	}
	return 0
}

// findRoot returns the repository's root: the working directory or the
// nearest directory above it that holds go.work.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.work in the working directory or above it")
		}
		dir = up
	}
}

// set rewrites the go.mod of every module in mods to require its siblings at
// version, and go.work to replace the published modules at version with
// their directories, printing the files it changed.
func set(root string, mods []*Module, version string, stdout io.Writer) error {
	file := filepath.Join(root, "go.work")
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := rewriteWork(file, data, mods, version)
	if err != nil {
		return err
	}
	if string(out) != string(data) {
		if err := os.WriteFile(file, out, 0o644); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "rewrote go.work")
	}
	for _, m := range mods {
		file := filepath.Join(root, m.Dir, "go.mod")
		out, err := rewrite(file, m.data, m, mods, version)
		if err != nil {
			return err
		}
		if string(out) == string(m.data) {
			continue
		}
		if err := os.WriteFile(file, out, 0o644); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "rewrote", filepath.ToSlash(filepath.Join(m.Dir, "go.mod")))
	}
	return nil
}

// tags returns the git tags that release version, in the order to push
// them (see order).
func tags(mods []*Module, version string) []string {
	var out []string
	for _, m := range order(mods) {
		out = append(out, tag(m, version))
	}
	return out
}

// tag is the git tag of module m at version: the version for the root
// module, the module's directory and the version for the others.
func tag(m *Module, version string) string {
	if m.Dir == "." {
		return version
	}
	return strings.TrimSuffix(m.Dir, "/") + "/" + version
}
