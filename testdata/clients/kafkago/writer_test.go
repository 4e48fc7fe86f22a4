package kafkago

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
	"github.com/circuitgen/circuitgen/testdata/clients/gone"
)

// TestBrokerCodesAreSelected checks the generated classifier on kafka-go's
// own error values: a selected broker code (kafka.Error constants, matched
// with errors.Is through wrapping) is a failure, another code is not.
func TestBrokerCodesAreSelected(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		err  error
		want circuit.Outcome
	}{
		{kafka.LeaderNotAvailable, circuit.Failure},
		{fmt.Errorf("write: %w", kafka.NotLeaderForPartition), circuit.Failure},
		{kafka.UnknownTopicOrPartition, circuit.Ignored},
		{kafka.MessageSizeTooLarge, circuit.Ignored},
		{nil, circuit.Success},
	}
	for _, tt := range tests {
		if got := classifyKafkaWriter(ctx, tt.err); got != tt.want {
			t.Errorf("classify(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestWriterAgainstAGoneBroker drives a real kafka.Writer whose broker is
// gone (a loopback listener that closes every connection): its failures
// open the circuit, and a rejected WriteMessages returns the
// *circuit.OpenError.
func TestWriterAgainstAGoneBroker(t *testing.T) {
	broker := gone.Start(t)
	raw := &kafka.Writer{Addr: kafka.TCP(broker.Addr()), Topic: "orders", MaxAttempts: 1, WriteTimeout: time.Second}
	t.Cleanup(func() { raw.Close() })
	kit := circuittest.New()
	w := NewGuardedWriter(raw, kit.Breaker)
	var open *circuit.OpenError
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := w.WriteMessages(ctx, kafka.Message{Value: []byte("1")})
		cancel()
		if err == nil || errors.As(err, &open) {
			t.Fatalf("WriteMessages %d with the broker gone: %v, want its error", i, err)
		}
	}
	if s, _ := kit.Breaker.Snapshot(context.Background(), "kafka-writer"); s.State != circuit.StateOpen {
		t.Fatalf("after 3 failed writes: %+v, want open", s)
	}
	if err := w.WriteMessages(context.Background(), kafka.Message{Value: []byte("2")}); !errors.As(err, &open) {
		t.Fatalf("WriteMessages on the open circuit: %v, want the *circuit.OpenError", err)
	}
}
