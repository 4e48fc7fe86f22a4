package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// command is a circuitctl command that works on a store: its flags, -store
// and -timeout among them, and the prefix of its messages.
type command struct {
	name   string // "circuitctl clear"
	usage  string
	fs     *flag.FlagSet
	store  storeFlags
	stderr io.Writer
	// renew gives a new context bounded by -timeout, once the store is open.
	renew func() (context.Context, context.CancelFunc)
}

// newCommand returns the command verb (state, open, clear), which -h
// describes with its usage line, the sentence about and its flags.
func newCommand(verb, usage, about string, stderr io.Writer) *command {
	c := &command{name: "circuitctl " + verb, usage: usage, stderr: stderr}
	c.fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.fs.SetOutput(stderr)
	c.store = addStoreFlags(c.fs)
	c.fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fmt.Fprintln(stderr, about)
		c.fs.PrintDefaults()
	}
	return c
}

// run parses args, which name exactly one circuit when one is set and any
// number otherwise; checks the names, and the flags with check when it is
// not nil; opens the store; and returns do's exit status over it. It
// returns 0 for -h, 2 for a usage error and 1 when the store cannot be
// opened, having said why.
func (c *command) run(args []string, one bool, check func() error, do func(ctx context.Context, st opened, b *circuit.Breaker, names []string) int) int {
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	names := c.fs.Args()
	if one && len(names) != 1 {
		fmt.Fprintln(c.stderr, c.usage)
		return 2
	}
	for _, n := range names {
		if err := circuit.ValidateName(n); err != nil {
			if strings.ContainsAny(n, "/:") {
				err = fmt.Errorf("%w; to name the store, pass -store URL before the names", err)
			}
			return c.usageError(err)
		}
	}
	if check != nil {
		if err := check(); err != nil {
			return c.usageError(err)
		}
	}
	st, ctx, renew, done, err := c.store.open()
	if err != nil {
		if isUsage(err) {
			return c.usageError(err)
		}
		return c.fail(err)
	}
	defer done()
	c.renew = renew
	return do(ctx, st, circuit.New(st.Store, circuit.WithObserver(warnings{c})), names)
}

// warnings is an EventObserver that says what the store reports about
// itself (an unsafe server setting, a lost dataset) as a warning.
type warnings struct{ c *command }

func (warnings) ObserveTransition(circuit.Transition) {}

func (w warnings) ObserveEvent(e circuit.Event) {
	if e.Name == "" { // a circuit's StateErrors are the command's to say
		fmt.Fprintf(w.c.stderr, "%s: warning: %s\n", w.c.name, printable(e.Err.Error()))
	}
}

// fail says err and returns exit status 1.
func (c *command) fail(err error) int {
	fmt.Fprintf(c.stderr, "%s: %s\n", c.name, printable(err.Error()))
	return 1
}

// usageError says err and returns exit status 2.
func (c *command) usageError(err error) int {
	c.fail(err)
	return 2
}
