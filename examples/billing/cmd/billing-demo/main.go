// Command billing-demo tells circuitgen's story: a guarded billing client
// whose provider fails and recovers while several processes share the
// circuit's state. Run it with `make demo` or
// `go run ./examples/billing/cmd/billing-demo`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/circuitgen/circuitgen/examples/billing/demo"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		if err := demo.Worker(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "billing-demo worker:", err)
			os.Exit(1)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "billing-demo:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := demo.Run(ctx, os.Stdout, demo.Config{Worker: []string{self, "worker"}}); err != nil {
		fmt.Fprintln(os.Stderr, "billing-demo:", err)
		os.Exit(1)
	}
}
