package demo

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/circuitgen/circuitgen/examples/billing"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// Result is what one call of a worker process reports to the demo.
type Result struct {
	PID         int      `json:"pid"`
	Outcome     string   `json:"outcome"` // "ok", "rejected" or "failed"
	RetryAfter  int      `json:"retry_after,omitempty"`
	HalfOpen    bool     `json:"half_open,omitempty"` // rejected because a probe is in flight
	Error       string   `json:"error,omitempty"`
	Transitions []string `json:"transitions,omitempty"`
}

// Worker is the demo's worker process: it opens the shared state directory,
// makes one guarded charge at the agreed moment, and prints a Result as one
// JSON line on w. args are its flags: -state DIR -url URL -at UNIXNANO.
func Worker(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	state := fs.String("state", "", "state directory")
	url := fs.String("url", "", "billing provider URL")
	at := fs.Int64("at", 0, "start at this Unix time in nanoseconds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := filestore.Open(*state)
	if err != nil {
		return err
	}
	res := Result{PID: os.Getpid()}
	b := circuit.New(store, circuit.WithObserver(circuit.ObserverFunc(func(t circuit.Transition) {
		res.Transitions = append(res.Transitions, t.From.String()+" → "+t.To.String())
	})))
	client := billing.NewGuardedBillingAPI(billing.NewClient(*url, nil), b)
	defer client.Close()
	time.Sleep(time.Until(time.Unix(0, *at)))
	_, err = charge(context.Background(), client, fmt.Sprintf("cus_%d", res.PID))
	classify(&res, err)
	return json.NewEncoder(w).Encode(res)
}

func charge(ctx context.Context, api billing.BillingAPI, customer string) (*billing.Receipt, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return api.Charge(ctx, billing.ChargeRequest{
		CustomerID: customer, Amount: billing.Money{Amount: 1999, Currency: "EUR"},
		IdempotencyKey: fmt.Sprintf("%s-%d", customer, time.Now().UnixNano()),
	})
}

func classify(r *Result, err error) {
	var open *circuit.OpenError
	switch {
	case err == nil:
		r.Outcome = "ok"
	case errors.As(err, &open):
		r.Outcome = "rejected"
		r.RetryAfter = open.RetryAfterSeconds()
		r.HalfOpen = open.State == circuit.StateHalfOpen
		r.Error = err.Error()
	default:
		r.Outcome = "failed"
		r.Error = err.Error()
	}
}
