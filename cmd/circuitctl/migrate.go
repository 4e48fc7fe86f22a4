package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/circuitgen/circuitgen/runtime/storeurl"
)

const migrateUsage = "usage: circuitctl migrate [-store URL] [-timeout D]"

// runMigrate prepares the store for use, as a deployment step
// (storeurl.Migrate): it creates or updates the tables of a database, and
// checks that a file or Redis store opens. Running it again changes
// nothing. Exit status 1 when it fails.
func runMigrate(args []string, stdout, stderr io.Writer) int {
	c := newCommand("migrate", migrateUsage, "Creates or updates the tables of a postgres:// or sqlite:/// store; checks that any other store opens.", stderr)
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if c.fs.NArg() != 0 {
		fmt.Fprintln(stderr, migrateUsage)
		return 2
	}
	raw, err := c.store.target()
	if err != nil {
		return c.usageError(err)
	}
	ctx, done := c.store.context()
	defer done()
	if err := storeurl.Migrate(ctx, raw); err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(stdout, "store %s is ready\n", storeurl.Redact(raw))
	return 0
}
