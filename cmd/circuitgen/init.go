package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/circuitgen/circuitgen/generator"
)

// runInit writes a manifest scaffold for one interface.
func runInit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("circuitgen init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	source := fs.String("source", "", "the interface, as IMPORTPATH.Interface (required)")
	out := fs.String("o", "circuitgen.yaml", "the manifest to write; - for standard output")
	force := fs.Bool("force", false, "overwrite an existing manifest")
	var tags tagsFlag
	fs.Var(&tags, "tags", "comma-separated build tags")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *source == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: circuitgen init -source IMPORTPATH.Interface [-o circuitgen.yaml] [-force]")
		return 2
	}
	data, err := generator.Scaffold("", *source, filepath.Base(*out), tags)
	if err != nil {
		fmt.Fprintf(stderr, "circuitgen init: %v\n", err)
		return 1
	}
	if *out == "-" {
		stdout.Write(data)
		return 0
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(*out, flags, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			fmt.Fprintf(stderr, "circuitgen init: %s exists: use -force to overwrite it\n", *out)
		} else {
			fmt.Fprintf(stderr, "circuitgen init: %v\n", err)
		}
		return 1
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "circuitgen init: %v\n", err)
		return 1
	}
	return 0
}
