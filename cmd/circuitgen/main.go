// Command circuitgen generates guarded clients: wrappers of Go interfaces
// that run every call through a circuit breaker.
//
// Usage:
//
//	circuitgen [gen] [-manifest F] [-out F] [-tags T] [-check] [packages]
//	circuitgen init -source IMPORTPATH.Name [-o FILE] [-force]
//	circuitgen version
//
// Without a subcommand it runs gen. Exit status: 0 on success, 1 when the
// input has errors or -check finds a stale file, 2 on a usage error.
//
// circuitgen imports only the generator, no store or driver, so that adding
// it to a module with go get -tool adds little; the operators' commands are
// in circuitctl.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is a subcommand: it runs with its arguments and returns the exit
// status.
type command struct {
	run     func(args []string, stdout, stderr io.Writer) int
	summary string
}

// commands are the subcommands by name. Add a subcommand here.
var commands = map[string]command{
	"gen":     {runGen, "generate guarded clients (the default)"},
	"init":    {runInit, "write a manifest scaffold for an interface"},
	"version": {runVersion, "print circuitgen's version and the generator's"},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand, gen when none is named.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			usage(stdout)
			return 0
		}
		if c, ok := commands[args[0]]; ok {
			return c.run(args[1:], stdout, stderr)
		}
	}
	return runGen(args, stdout, stderr)
}

// usage lists the subcommands.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: circuitgen [command] [flags] [packages]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-7s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nrun circuitgen COMMAND -h for a command's flags")
}

// tagsFlag collects -tags values, comma or space separated.
type tagsFlag []string

func (t *tagsFlag) String() string { return strings.Join(*t, ",") }

func (t *tagsFlag) Set(s string) error {
	*t = append(*t, strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })...)
	return nil
}
