package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// hold is a command that holds a circuit in a state for a while, in every
// process sharing the store: open (Breaker.ForceOpen: no call goes through)
// or close (Breaker.ForceClosed: every call goes through and nothing
// counts), until the time ends or the circuit is cleared.
type hold struct {
	verb  string // "open", "close"
	state string // "open", "closed"
	about string
	force func(b *circuit.Breaker, ctx context.Context, name string, d time.Duration) error
}

var (
	openHold = hold{"open", "open", "Holds the circuit open for the duration in every process sharing the store: no call goes through; clear ends it sooner.",
		(*circuit.Breaker).ForceOpen}
	closeHold = hold{"close", "closed", "Holds the circuit closed for the duration in every process sharing the store: every call goes through and no failure counts; clear ends it sooner.",
		(*circuit.Breaker).ForceClosed}
)

func runOpen(args []string, stdout, stderr io.Writer) int { return openHold.run(args, stdout, stderr) }
func runClose(args []string, stdout, stderr io.Writer) int {
	return closeHold.run(args, stdout, stderr)
}

// run runs the command. It refuses a circuit the store has never seen (no
// record) unless -new is given. It asks for confirmation when standard
// input is a terminal, and requires -yes otherwise. Exit status 1 when it
// is refused or fails (a corrupt record must be cleared first); nothing is
// changed then.
func (h hold) run(args []string, stdout, stderr io.Writer) int {
	usage := "usage: circuitctl " + h.verb + " [-store URL] -for D [-new] [-yes] [-timeout D] NAME"
	c := newCommand(h.verb, usage, h.about, stderr)
	d := c.fs.Duration("for", 0, "how long to hold the circuit "+h.state+", 1s..24h (required)")
	create := c.fs.Bool("new", false, h.verb+" a circuit the store has never seen (no record) all the same")
	yes := c.fs.Bool("yes", false, h.verb+" without asking")
	checkFor := func() error {
		if *d < minHold || *d > maxHold {
			return fmt.Errorf("-for %v: must be within %v..%v", *d, minHold, maxHold)
		}
		return nil
	}
	return c.run(args, true, checkFor, func(ctx context.Context, st opened, b *circuit.Breaker, names []string) int {
		name := names[0]
		if err := checkKnown(ctx, b, st, h.verb, name, *create); err != nil {
			return c.fail(openError(err))
		}
		if !*yes && !confirm(stderr, h.verb, name, fmt.Sprintf("force circuit %s %s in %s for %v? [y/N] ", name, h.state, st, *d)) {
			return 1
		}
		ctx, cancel := c.renew() // -timeout bounds the write, not the operator's answer
		defer cancel()
		if err := h.force(b, ctx, name, *d); err != nil {
			return c.fail(openError(err))
		}
		until := "for " + d.String()
		if snap, err := b.Snapshot(ctx, name); err == nil && snap.Forced {
			until = "until " + snap.OpenUntil.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(stdout, "forced circuit %s %s in %s %s; circuitctl clear ends it\n", name, h.state, st, until)
		return 0
	})
}

// The bounds of a hold, as circuit.Breaker.ForceOpen and ForceClosed take it:
// checked before the store is opened, for a usage error.
const (
	minHold = time.Second
	maxHold = 24 * time.Hour
)
