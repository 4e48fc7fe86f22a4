//go:build unix

package jetstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// TestReturnedInterfacesComeBackGuarded drives the guarded JetStream
// against a real nats-server, a process of the test's own: the streams
// and buckets it creates come back guarded, on the same Breaker; when the
// server goes away their calls fail and open their own circuits, and a
// rejected call is not sent.
func TestReturnedInterfacesComeBackGuarded(t *testing.T) {
	srv, url := testenv.StartNats(t)
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	raw, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kit := circuittest.New()
	js := NewGuardedJetStream(raw, kit.Breaker)
	ctx := context.Background()

	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := stream.(*GuardedStream); !ok {
		t.Fatalf("CreateStream returned %T, want a *GuardedStream", stream)
	}
	if _, err := js.Publish(ctx, "orders.new", []byte("1")); err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil || info.State.Msgs != 1 {
		t.Fatalf("Stream.Info = %+v, %v; want 1 message", info, err)
	}
	again, err := js.Stream(ctx, "ORDERS")
	if _, ok := again.(*GuardedStream); err != nil || !ok {
		t.Fatalf("Stream = %T, %v; want a *GuardedStream", again, err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "profiles"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := kv.(*GuardedKeyValue); !ok {
		t.Fatalf("CreateKeyValue returned %T, want a *GuardedKeyValue", kv)
	}
	if _, err := kv.Put(ctx, "alice", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(ctx, "alice"); err != nil || string(e.Value()) != "a" {
		t.Fatalf("KeyValue.Get = %v, %v; want a", e, err)
	}
	for range 5 {
		if _, err := kv.Get(ctx, "nobody"); !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Fatalf("Get of a missing key: %v, want jetstream.ErrKeyNotFound", err)
		}
	}
	if s, _ := kit.Breaker.Snapshot(ctx, "jetstream-kv"); s.State != circuit.StateClosed || s.Failures != 0 {
		t.Fatalf("after missing keys: %+v, want closed with no failure", s)
	}

	if err := srv.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = srv.Wait()
	for i := range 3 {
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := kv.Get(short, "alice")
		cancel()
		var open *circuit.OpenError
		if err == nil || errors.As(err, &open) {
			t.Fatalf("Get %d with the server gone: %v, want its error", i, err)
		}
	}
	if s, _ := kit.Breaker.Snapshot(ctx, "jetstream-kv"); s.State != circuit.StateOpen {
		t.Fatalf("the returned bucket's circuit after 3 failures: %+v, want open", s)
	}
	sent := nc.Stats().OutMsgs
	_, err = kv.Get(ctx, "alice")
	var open *circuit.OpenError
	if !errors.As(err, &open) || open.Name != "jetstream-kv" {
		t.Fatalf("Get on the open circuit: %v, want the *circuit.OpenError of jetstream-kv", err)
	}
	if after := nc.Stats().OutMsgs; after != sent {
		t.Errorf("the rejected Get sent %d messages, want none", after-sent)
	}
	if s, _ := kit.Breaker.Snapshot(ctx, "jetstream"); s.State != circuit.StateClosed {
		t.Errorf("the JetStream circuit: %+v, want closed (only the bucket's failed)", s)
	}
}
