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
	source := fs.String("source", "", "the interface or struct client, as IMPORTPATH.Name (required)")
	out := fs.String("o", "", "the file to write (default circuitgen.yaml for an interface, name.go for a struct client); - for standard output")
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
		fmt.Fprintln(stderr, "usage: circuitgen init -source IMPORTPATH.Name [-o FILE] [-force]")
		return 2
	}
	name := ""
	if *out != "" && *out != "-" {
		name = filepath.Base(*out)
	}
	scaffold, err := generator.Scaffold("", *source, name, tags)
	if err != nil {
		fmt.Fprintf(stderr, "circuitgen init: %v\n", err)
		return 1
	}
	data := scaffold.Content
	if *out == "-" {
		stdout.Write(data)
		return 0
	}
	if *out == "" {
		*out = scaffold.Path
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
