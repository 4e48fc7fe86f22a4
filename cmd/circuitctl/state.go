package main

import (
	"context"
	"io"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

const stateUsage = "usage: circuitctl state [-store URL] [-json] [-watch] [-timeout D] [names...]"

// runState prints the state of circuits in a store: the named ones, or every
// circuit with a record. It changes nothing. Exit status 1 when a record
// cannot be read (the others are printed all the same).
func runState(args []string, stdout, stderr io.Writer) int {
	c := newCommand("state", stateUsage, "Prints the named circuits, or every circuit with a record in the store.", stderr)
	asJSON := c.fs.Bool("json", false, "print JSON instead of a table")
	watch := c.fs.Bool("watch", false, "keep printing as the circuits change, until interrupted (-timeout bounds each reading)")
	return c.run(args, false, nil, func(ctx context.Context, st opened, b *circuit.Breaker, names []string) int {
		if *watch {
			return watchStates(st, b, names, *c.store.timeout, *asJSON, stdout, stderr)
		}
		rep, errs := readReport(ctx, st, b, names)
		var err error
		if *asJSON {
			err = writeJSON(stdout, rep)
		} else {
			err = writeTable(stdout, rep, time.Now())
		}
		if err != nil {
			return c.fail(err)
		}
		for _, e := range errs {
			c.fail(e)
		}
		if len(errs) > 0 {
			return 1
		}
		return 0
	})
}
