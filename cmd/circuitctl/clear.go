package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"golang.org/x/term"
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
	if !*yes {
		if !term.IsTerminal(int(os.Stdin.Fd())) {
			fmt.Fprintf(stderr, "circuitctl clear: standard input is not a terminal: pass -yes to clear circuit %s without confirmation\n", name)
			return 1
		}
		if !confirm(stderr, fmt.Sprintf("clear circuit %s in %s? [y/N] ", name, st)) {
			fmt.Fprintf(stderr, "circuitctl clear: circuit %s not cleared\n", name)
			return 1
		}
	}
	if err := b.Clear(ctx, name); err != nil {
		fmt.Fprintf(stderr, "circuitctl clear: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "cleared circuit %s in %s\n", name, st)
	return 0
}

// confirm asks question on w and reports whether standard input answers
// y or yes.
func confirm(w io.Writer, question string) bool {
	fmt.Fprint(w, question)
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
