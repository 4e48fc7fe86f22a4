package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// checkKnown returns an error unless the store st has a record of the named
// circuit or create is set: a name the store has never seen is a typo, or a
// circuit that has not failed since its first call (a healthy circuit
// writes no record), and holding it (verb: open, close) is asked for.
func checkKnown(ctx context.Context, b *circuit.Breaker, st opened, verb, name string, create bool) error {
	snap, err := b.Snapshot(ctx, name)
	switch {
	case err != nil:
		return err
	case !snap.Exists && !create:
		return fmt.Errorf("circuit %s has never been seen in %s (no record: it has not failed since its first call, or the name is wrong): check the name, or pass -new to %s it all the same", name, st, verb)
	}
	return nil
}

// openError is err, with what to do when it is a corrupt record.
func openError(err error) error {
	if se, ok := errors.AsType[*circuit.StateError](err); ok && se.Corrupt() {
		return fmt.Errorf("%w (circuitctl clear removes the corrupt record)", err)
	}
	return err
}
