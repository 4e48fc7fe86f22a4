package bench

import (
	"context"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// BenchmarkModes measures, over the file store through the prepared handle
// (circuit.Circuit), each mode beside the plain circuit:
//
//   - closed: a successful call through a closed circuit, rejecting and
//     observe-only;
//   - rejection: a call to a circuit forced open, rejected, and the same
//     call observe-only, which runs the operation instead;
//   - rate: a successful call under the rate rule over the last minute and
//     over the last 100 calls;
//   - held: a successful call through a circuit an operator holds closed.
func BenchmarkModes(b *testing.B) {
	ctx := context.Background()
	up := func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }
	observe := []circuit.Option{circuit.WithObserveOnly()}
	calls := ratePolicy
	calls.Window, calls.WindowCalls = 0, 100
	for _, row := range []struct {
		name   string
		opts   []circuit.Option
		p      circuit.Policy
		force  func(*circuit.Breaker) error
		reject bool
	}{
		{name: "closed/mode=rejects", p: circuit.DefaultPolicy},
		{name: "closed/mode=observe-only", opts: observe, p: circuit.DefaultPolicy},
		{name: "rejection/mode=rejects", p: circuit.DefaultPolicy, force: forceOpen, reject: true},
		{name: "rejection/mode=observe-only", opts: observe, p: circuit.DefaultPolicy, force: forceOpen},
		{name: "rate/window=time", p: ratePolicy},
		{name: "rate/window=calls", p: calls},
		{name: "held/mode=rejects", p: circuit.DefaultPolicy, force: forceClosed},
	} {
		b.Run(row.name, func(b *testing.B) {
			br := circuit.New(stores[0].open(b), row.opts...)
			c := br.Circuit("bench-mode", row.p)
			want(b, c.Run(ctx, up), nil) // creates the record and any window file
			if row.force != nil {
				if err := row.force(br); err != nil {
					b.Fatal(err)
				}
			}
			var target error
			if row.reject {
				target = circuit.ErrOpen
			}
			b.ReportAllocs()
			for b.Loop() {
				want(b, c.Run(ctx, up), target)
			}
		})
	}
}

func forceOpen(b *circuit.Breaker) error {
	return b.ForceOpen(context.Background(), "bench-mode", time.Hour)
}

func forceClosed(b *circuit.Breaker) error {
	return b.ForceClosed(context.Background(), "bench-mode", time.Hour)
}
