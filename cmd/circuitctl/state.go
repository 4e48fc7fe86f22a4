package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

const stateUsage = "usage: circuitctl state [-store URL] [-json] [-watch] [-timeout D] [names...]"

// runState prints the state of circuits in a store: the named ones, or every
// circuit with a record. It changes nothing. Exit status 1 when a record
// cannot be read (the others are printed all the same).
func runState(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("circuitctl state", flag.ContinueOnError)
	fs.SetOutput(stderr)
	store := addStoreFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	watch := fs.Bool("watch", false, "keep printing as the circuits change, until interrupted (-timeout bounds each reading)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, stateUsage)
		fmt.Fprintln(stderr, "Prints the named circuits, or every circuit with a record in the store.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	names := fs.Args()
	for _, n := range names {
		if err := circuit.ValidateName(n); err != nil {
			fmt.Fprintf(stderr, "circuitctl state: %v\n", err)
			return 2
		}
	}
	st, ctx, done, err := store.open()
	if err != nil {
		fmt.Fprintf(stderr, "circuitctl state: %v\n", err)
		if isUsage(err) {
			return 2
		}
		return 1
	}
	defer done()
	b := circuit.New(st)
	if *watch {
		return watchStates(st, b, names, *store.timeout, *asJSON, stdout, stderr)
	}
	rep, errs := readReport(ctx, st, b, names)
	if *asJSON {
		err = writeJSON(stdout, rep)
	} else {
		err = writeTable(stdout, rep, time.Now())
	}
	if err != nil {
		fmt.Fprintf(stderr, "circuitctl state: %v\n", err)
		return 1
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "circuitctl state: %v\n", e)
	}
	if len(errs) > 0 {
		return 1
	}
	return 0
}
