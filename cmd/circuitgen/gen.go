package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/circuitgen/circuitgen/generator"
)

// checkEnv, when set to a true value, has the effect of -check, so that
// `CIRCUITGEN_CHECK=1 go generate ./...` checks every generated file with
// exactly the arguments of its //go:generate line (.ci/stale does this).
const checkEnv = "CIRCUITGEN_CHECK"

// runGen generates (or with -check, checks) the guarded clients.
func runGen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("circuitgen gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	manifest := fs.String("manifest", "", "read interfaces from this circuitgen.yaml")
	out := fs.String("out", "", "write the output to this file instead of "+generator.DefaultOutput)
	check := fs.Bool("check", false, "write nothing; print a diff and exit 1 when the output is stale")
	var tags tagsFlag
	fs.Var(&tags, "tags", "comma-separated build tags")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: circuitgen [gen] [-manifest F] [-out F] [-tags T] [-check] [packages]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if v := os.Getenv(checkEnv); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			fmt.Fprintf(stderr, "circuitgen: %s=%q is not a boolean\n", checkEnv, v)
			return 2
		}
		*check = *check || on
	}
	cfg := generator.Config{
		Patterns:  fs.Args(),
		Manifest:  *manifest,
		Out:       *out,
		Tags:      tags,
		GoPackage: os.Getenv("GOPACKAGE"),
	}
	if !*check {
		// Warnings are shown where files are written; a check repeats
		// none of them.
		cfg.Warnings = stderr
	}
	outs, err := generator.Generate(cfg)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *check {
		wd, _ := os.Getwd()
		stale, err := generator.Check(outs, wd, stdout)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		if stale {
			fmt.Fprintln(stderr, "circuitgen: the generated code above is stale: run go generate")
			return 1
		}
		return 0
	}
	if err := generator.Write(outs); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
