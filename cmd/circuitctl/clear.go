package main

import (
	"context"
	"errors"
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
	c := newCommand("clear", clearUsage, "Removes the circuit's record, even a corrupt one: it starts afresh, closed.", stderr)
	yes := c.fs.Bool("yes", false, "clear without asking")
	return c.run(args, true, nil, func(ctx context.Context, st opened, b *circuit.Breaker, names []string) int {
		name := names[0]
		snap, err := b.Snapshot(ctx, name)
		var se *circuit.StateError
		switch {
		case errors.As(err, &se) && se.Corrupt():
			fmt.Fprintf(stderr, "circuitctl clear: the record is corrupt; clearing removes it: %s\n", printable(err.Error()))
		case err != nil:
			return c.fail(err)
		case !snap.Exists:
			return c.fail(fmt.Errorf("circuit %s has never been seen in %s (no record): nothing to clear", name, st))
		}
		if !*yes && !confirm(stderr, "clear", name, fmt.Sprintf("clear circuit %s in %s? [y/N] ", name, st)) {
			return 1
		}
		ctx, cancel := c.renew() // -timeout bounds the write, not the operator's answer
		defer cancel()
		if err := b.Clear(ctx, name); err != nil {
			return c.fail(err)
		}
		fmt.Fprintf(stdout, "cleared circuit %s in %s\n", name, st)
		return 0
	})
}
