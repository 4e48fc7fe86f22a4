package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

const openUsage = "usage: circuitctl open [-store URL] -for D [-yes] [-timeout D] NAME"

// runOpen forces a circuit open for a while (Breaker.ForceOpen), in every
// process sharing the store: no call goes through until it ends or the
// circuit is cleared. It asks for confirmation when standard input is a
// terminal, and requires -yes otherwise. Exit status 1 when it is refused or
// fails (a corrupt record must be cleared first); nothing is changed then.
func runOpen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("circuitctl open", flag.ContinueOnError)
	fs.SetOutput(stderr)
	store := addStoreFlags(fs)
	d := fs.Duration("for", 0, "how long to hold the circuit open, 1s..24h (required)")
	yes := fs.Bool("yes", false, "open without asking")
	fs.Usage = func() {
		fmt.Fprintln(stderr, openUsage)
		fmt.Fprintln(stderr, "Holds the circuit open for the duration in every process sharing the store; clear ends it sooner.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, openUsage)
		return 2
	}
	name := fs.Arg(0)
	if err := circuit.ValidateName(name); err != nil {
		fmt.Fprintf(stderr, "circuitctl open: %v\n", err)
		return 2
	}
	if *d < circuit.MinCooldown || *d > circuit.MaxCooldown {
		fmt.Fprintf(stderr, "circuitctl open: -for %v: must be within %v..%v\n", *d, circuit.MinCooldown, circuit.MaxCooldown)
		return 2
	}
	st, ctx, done, err := store.open()
	if err != nil {
		fmt.Fprintf(stderr, "circuitctl open: %v\n", err)
		if isUsage(err) {
			return 2
		}
		return 1
	}
	defer done()
	if !*yes && !confirm(stderr, "open", name, fmt.Sprintf("force circuit %s open in %s for %v? [y/N] ", name, st, *d)) {
		return 1
	}
	b := circuit.New(st)
	if err := b.ForceOpen(ctx, name, *d); err != nil {
		if se, ok := errors.AsType[*circuit.StateError](err); ok && se.Corrupt() {
			err = fmt.Errorf("%w (circuitctl clear removes the corrupt record)", err)
		}
		fmt.Fprintf(stderr, "circuitctl open: %v\n", err)
		return 1
	}
	until := "for " + d.String()
	if snap, err := b.Snapshot(ctx, name); err == nil && snap.Forced {
		until = "until " + snap.OpenUntil.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(stdout, "forced circuit %s open in %s %s; circuitctl clear ends it\n", name, st, until)
	return 0
}
