package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"golang.org/x/term"
)

// watchInterval is how often state -watch reads the circuits. A reading
// goes through the store's own change signal where it has one, so that
// unchanged records cost nothing: the file store's change index (no file
// read), Redis's server-assisted invalidation and PostgreSQL's LISTEN/NOTIFY
// (no round trip; storeurl turns them on). Elsewhere it is one round trip
// per circuit. Listing the circuits
// (when none are named) reads the store each time.
const watchInterval = time.Second

// clearScreen moves the cursor home and clears the terminal.
const clearScreen = "\x1b[H\x1b[2J"

// watchStates reads the circuits every watchInterval until interrupted, each
// reading bounded by timeout. On a terminal it redraws the table in place
// every time (its countdowns move); otherwise it prints the table again, or
// one line of JSON, each time the circuits change. Errors of a reading are
// shown with it (in the JSON report's errors) and the watch goes on. Exit status 0 when interrupted.
func watchStates(st opened, b *circuit.Breaker, names []string, timeout time.Duration, asJSON bool, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tty := !asJSON && isTerminal(stdout)
	var last []byte
	for {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		rep, errs := readReport(rctx, st, b, names)
		cancel()
		if ctx.Err() != nil {
			return 0
		}
		key, err := json.Marshal(rep)
		if err != nil {
			fmt.Fprintf(stderr, "circuitctl state: %s\n", printable(err.Error()))
			return 1
		}
		if tty || !bytes.Equal(key, last) {
			last = key
			var out bytes.Buffer
			switch {
			case asJSON:
				out.Write(jsonSafe(key))
				out.WriteByte('\n')
			case tty:
				now := time.Now()
				fmt.Fprintf(&out, "%s%s at %s (every %v; Ctrl-C to stop)\n\n", clearScreen, st, now.UTC().Format(time.RFC3339), watchInterval)
				_ = writeTable(&out, rep, now)
			default:
				now := time.Now()
				fmt.Fprintf(&out, "%s at %s\n", st, now.UTC().Format(time.RFC3339))
				_ = writeTable(&out, rep, now)
				out.WriteByte('\n')
			}
			for _, e := range errs {
				if !asJSON { // the report holds them
					fmt.Fprintf(&out, "error: %s\n", printable(e.Error()))
				}
			}
			if _, err := stdout.Write(out.Bytes()); err != nil {
				fmt.Fprintf(stderr, "circuitctl state: %s\n", printable(err.Error()))
				return 1
			}
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(watchInterval):
		}
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
