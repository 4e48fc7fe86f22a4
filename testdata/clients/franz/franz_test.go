package franz

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
	"github.com/circuitgen/circuitgen/testdata/clients/gone"
)

// TestResultsCarryTheRejection drives a guarded franz-go client whose
// broker is gone (a loopback listener that closes every connection):
// ProduceSync and PollFetches fail through their results' own errors and
// open the circuit; then a rejected ProduceSync returns ProduceResults
// whose FirstErr is the *circuit.OpenError, a rejected PollFetches Fetches
// whose Err is: next is not called (the client keeps its own
// background dials, so they are not counted here).
func TestResultsCarryTheRejection(t *testing.T) {
	broker := gone.Start(t)
	raw, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr()), kgo.DefaultProduceTopic("orders"), kgo.ConsumeTopics("orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	kit := circuittest.New()
	client := NewGuardedClient(raw, kit.Breaker)

	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		res := client.ProduceSync(ctx, &kgo.Record{Value: []byte("1")})
		cancel()
		var open *circuit.OpenError
		if err := res.FirstErr(); err == nil || errors.As(err, &open) {
			t.Fatalf("ProduceSync %d with the broker gone: %v, want its error", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	fetches := client.PollFetches(ctx)
	cancel()
	if err := fetches.Err(); err == nil {
		t.Fatal("PollFetches with the broker gone: no error")
	}
	if s, _ := kit.Breaker.Snapshot(context.Background(), "kafka"); s.State != circuit.StateOpen {
		t.Fatalf("after 3 failed calls: %+v, want open", s)
	}

	if broker.Conns() == 0 {
		t.Fatal("the client never dialed the broker")
	}
	var open *circuit.OpenError
	res := client.ProduceSync(context.Background(), &kgo.Record{Value: []byte("2")})
	if err := res.FirstErr(); !errors.As(err, &open) || open.Name != "kafka" {
		t.Fatalf("rejected ProduceSync: FirstErr = %v, want the *circuit.OpenError of kafka", err)
	}
	if _, err := res.First(); !errors.As(err, &open) {
		t.Fatalf("rejected ProduceSync: First = %v, want the *circuit.OpenError", err)
	}
	fetches = client.PollFetches(context.Background())
	if err := fetches.Err(); !errors.As(err, &open) {
		t.Fatalf("rejected PollFetches: Err = %v, want the *circuit.OpenError", err)
	}
	if errs := fetches.Errors(); len(errs) != 1 || !errors.As(errs[0].Err, &open) {
		t.Fatalf("rejected PollFetches: Errors = %v, want one *circuit.OpenError", errs)
	}
}
