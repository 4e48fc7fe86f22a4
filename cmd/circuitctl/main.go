// Command circuitctl is the operators' tool for circuits in a store: it
// shows their state, forces them open or closed and clears them. Its
// migrate command creates a database store's tables, at deployment.
//
// Usage:
//
//	circuitctl state [-store URL] [-json] [-watch] [-timeout D] [names...]
//	circuitctl open [-store URL] -for D [-new] [-yes] [-timeout D] NAME
//	circuitctl close [-store URL] -for D [-new] [-yes] [-timeout D] NAME
//	circuitctl clear [-store URL] [-yes] [-timeout D] NAME
//	circuitctl migrate [-store URL] [-timeout D]
//
// The store is the one a URL names (file:///dir, redis://…, rediss://…,
// unix://…, postgres://…, sqlite:///file.db; see runtime/storeurl); -store
// defaults to $CIRCUITGEN_STORE. Exit status: 0 on success, 1 when a record
// cannot be read or an open, a close or a clear is refused or fails, 2 on a usage
// error.
//
// state shows each circuit's state by the store's clock, as the next call
// would find it: an open circuit whose cooldown (or forced open) is over
// shows as "half_open (ready to probe)" before any call arrives, and as
// "half_open (probe in flight)" while a probe holds its claim. Forced
// circuits show as "open (forced)" or "closed (forced)", their OPEN UNTIL
// saying for how long. A circuit named on the command line that the store
// has no record of shows as "never seen": a circuit gets a record when an
// outcome first changes something, so this is a typo or a circuit that has
// not failed since its first call; open and close refuse such a name unless
// -new is given (a typo would otherwise hold nothing), and clear has nothing
// to clear.
//
// state -watch keeps reading the circuits, every second, until interrupted:
// on a terminal it redraws the table in place; otherwise it prints the table
// again (or, with -json, one line of JSON) each time the circuits change.
//
// The JSON of state -json is stable: fields are added, never renamed,
// removed or given another meaning (testdata/state.json pins it). A report
// is an object:
//
//	store     string   the store's URL, its password hidden
//	circuits  array    the circuits read, sorted by name, each an object:
//	  name         string   the circuit's name
//	  state        string   "closed", "open", "half_open", or "error" when its record cannot be read; by the store's clock
//	  probing      bool     for "half_open": true while a probe holds a live claim; absent when ready to probe
//	  failures     number   consecutive failures
//	  generation   number   the record's generation; 0 without a record
//	  open_until   string   RFC 3339, UTC: the end of the cooldown, or of an operator's hold when forced; absent when unset
//	  lease_until  string   RFC 3339, UTC: the end of the half-open probe's lease; absent when unset
//	  updated_at   string   RFC 3339, UTC: the record's last change; absent without a record
//	  forced       bool     true when an operator holds it in its state (circuitctl open, close) until open_until; absent otherwise
//	  successes    number   half-open probes that succeeded in a row (Policy.CloseAfter); absent when 0
//	  reopens      number   times a probe reopened it since it last closed (Policy.MaxCooldown); absent when 0
//	  recorded     bool     whether the store holds a record; false for a circuit with none (never failed, or never called; its state reads "closed")
//	  error        string   why the record cannot be read, for people; absent otherwise
//	errors    array    of strings, for people: each record that could not be read; absent when none
//
// circuitctl links every store driver; the generator, circuitgen, links
// none, so that adding it as a tool stays light.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/redis/go-redis/v9"
)

const usage = `usage: circuitctl command [flags] [arguments]

commands:
  state    print the state of circuits in a store
  open     force a circuit open for a while, in every process sharing the store
  close    force a circuit closed for a while: every call goes through, no failure counts
  clear    clear a circuit in a store, so that it starts afresh (and ends a forced open or close)
  migrate  create or update a database store's tables, at deployment

run circuitctl COMMAND -h for a command's flags
`

func main() {
	// go-redis logs its connection failures to standard error, where they
	// would land in the middle of state -watch's output: every failure
	// reaches the operator as the command's own error instead.
	redis.SetLogger(quietLogger{})
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// quietLogger is a go-redis logger that says nothing.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// run dispatches to the subcommand args name.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "state":
		return runState(args[1:], stdout, stderr)
	case "open":
		return runOpen(args[1:], stdout, stderr)
	case "close":
		return runClose(args[1:], stdout, stderr)
	case "clear":
		return runClear(args[1:], stdout, stderr)
	case "migrate":
		return runMigrate(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "circuitctl: unknown command %q\n\n%s", args[0], usage)
	return 2
}
