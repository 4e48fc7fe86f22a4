// Command circuitctl is the operators' tool for circuits in a store: it
// shows their state, forces them open and clears them.
//
// Usage:
//
//	circuitctl state [-store URL] [-json] [-timeout D] [names...]
//	circuitctl open [-store URL] -for D [-yes] [-timeout D] NAME
//	circuitctl clear [-store URL] [-yes] [-timeout D] NAME
//
// The store is the one a URL names (file:///dir, redis://…, rediss://…,
// unix://…, postgres://…, sqlite:///file.db; see runtime/storeurl); -store
// defaults to $CIRCUITGEN_STORE. Exit status: 0 on success, 1 when a record
// cannot be read or a clear is refused or fails, 2 on a usage error.
//
// circuitctl links every store driver; the generator, circuitgen, links
// none, so that adding it as a tool stays light.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `usage: circuitctl command [flags] [arguments]

commands:
  state  print the state of circuits in a store
  open   force a circuit open for a while, in every process sharing the store
  clear  clear a circuit in a store, so that it starts afresh (and ends a forced open)

run circuitctl COMMAND -h for a command's flags
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

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
	case "clear":
		return runClear(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "circuitctl: unknown command %q\n\n%s", args[0], usage)
	return 2
}
