package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

const openUsage = "usage: circuitctl open [-store URL] -for D [-new] [-yes] [-timeout D] NAME"

// runOpen forces a circuit open for a while (Breaker.ForceOpen), in every
// process sharing the store: no call goes through until it ends or the
// circuit is cleared. It refuses a circuit the store has never seen (no
// record) unless -new is given. It asks for confirmation when standard
// input is a terminal, and requires -yes otherwise. Exit status 1 when it is
// refused or fails (a corrupt record must be cleared first); nothing is
// changed then.
func runOpen(args []string, stdout, stderr io.Writer) int {
	c := newCommand("open", openUsage, "Holds the circuit open for the duration in every process sharing the store; clear ends it sooner.", stderr)
	d := c.fs.Duration("for", 0, "how long to hold the circuit open, 1s..24h (required)")
	create := c.fs.Bool("new", false, "open a circuit the store has never seen (no record) all the same")
	yes := c.fs.Bool("yes", false, "open without asking")
	checkFor := func() error {
		if *d < circuit.MinCooldown || *d > circuit.MaxCooldown {
			return fmt.Errorf("-for %v: must be within %v..%v", *d, circuit.MinCooldown, circuit.MaxCooldown)
		}
		return nil
	}
	return c.run(args, true, checkFor, func(ctx context.Context, st opened, b *circuit.Breaker, names []string) int {
		name := names[0]
		if err := checkKnown(ctx, b, st, name, *create); err != nil {
			return c.fail(openError(err))
		}
		if !*yes && !confirm(stderr, "open", name, fmt.Sprintf("force circuit %s open in %s for %v? [y/N] ", name, st, *d)) {
			return 1
		}
		ctx, cancel := c.renew() // -timeout bounds the write, not the operator's answer
		defer cancel()
		if err := b.ForceOpen(ctx, name, *d); err != nil {
			return c.fail(openError(err))
		}
		until := "for " + d.String()
		if snap, err := b.Snapshot(ctx, name); err == nil && snap.Forced {
			until = "until " + snap.OpenUntil.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(stdout, "forced circuit %s open in %s %s; circuitctl clear ends it\n", name, st, until)
		return 0
	})
}
