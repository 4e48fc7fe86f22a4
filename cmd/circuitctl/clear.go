package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

const clearUsage = "usage: circuitctl clear [-store URL] [-yes] [-timeout D] NAME"

// runClear removes a circuit's record, even a corrupt one, so that it starts
// afresh, closed. It asks for confirmation when standard input is a
// terminal, and requires -yes otherwise. Exit status 1 when the circuit has
// no record, when clearing is refused or fails; nothing is changed then.
func runClear(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("circuitctl clear", flag.ContinueOnError)
	fs.SetOutput(stderr)
	store := addStoreFlags(fs)
	yes := fs.Bool("yes", false, "clear without asking")
	fs.Usage = func() {
		fmt.Fprintln(stderr, clearUsage)
		fmt.Fprintln(stderr, "Removes the circuit's record, even a corrupt one: it starts afresh, closed.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, clearUsage)
		return 2
	}
	name := fs.Arg(0)
	if err := circuit.ValidateName(name); err != nil {
		fmt.Fprintf(stderr, "circuitctl clear: %v\n", err)
		return 2
	}
	st, ctx, done, err := store.open()
	if err != nil {
		fmt.Fprintf(stderr, "circuitctl clear: %v\n", err)
		if isUsage(err) {
			return 2
		}
		return 1
	}
	defer done()
	b := circuit.New(st)
	snap, err := b.Snapshot(ctx, name)
	var se *circuit.StateError
	switch {
	case errors.As(err, &se) && se.Corrupt():
		fmt.Fprintf(stderr, "circuitctl clear: the record is corrupt; clearing removes it: %v\n", err)
	case err != nil:
		fmt.Fprintf(stderr, "circuitctl clear: %v\n", err)
		return 1
	case !snap.Exists:
		fmt.Fprintf(stderr, "circuitctl clear: circuit %s has no record in %s: nothing to clear\n", name, st)
		return 1
	}
	if !*yes && !confirm(stderr, "clear", name, fmt.Sprintf("clear circuit %s in %s? [y/N] ", name, st)) {
		return 1
	}
	if err := b.Clear(ctx, name); err != nil {
		fmt.Fprintf(stderr, "circuitctl clear: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "cleared circuit %s in %s\n", name, st)
	return 0
}
