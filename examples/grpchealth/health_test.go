package grpchealth

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// serve starts a gRPC server with the health service on addr ("" for a
// fresh port) and returns its address.
func serve(t *testing.T, addr string) (string, *grpc.Server) {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lis net.Listener
	var err error
	for range 50 { // the port of a stopped server may take a moment to free
		if lis, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), srv
}

// dial returns a guarded health client of the server at addr, and its
// breaker over a fresh file store.
func dial(t *testing.T, addr string) (*GuardedHealthClient, *circuit.Breaker) {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	store, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(store)
	client := NewGuardedHealthClient(healthpb.NewHealthClient(conn), b)
	return client, b
}

// TestGuardedHealthClientAgainstServer drives the guarded client over a real
// in-process gRPC server: a served check passes, NotFound is no failure, a
// stopped server's Unavailable opens the circuit, rejected calls do not
// reach the network, and a restarted server closes it again.
func TestGuardedHealthClientAgainstServer(t *testing.T) {
	addr, srv := serve(t, "")
	client, b := dial(t, addr)
	ctx := context.Background()

	resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check = %v, %v; want SERVING", resp, err)
	}
	for range 5 {
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: "no-such-service"})
		if status.Code(err) != codes.NotFound {
			t.Fatalf("Check of an unknown service: %v, want NotFound", err)
		}
	}
	if s := state(t, b); s != "closed" {
		t.Fatalf("after NotFound the circuit is %s, want closed: NotFound is no failure", s)
	}

	srv.Stop()
	for i := range 3 {
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d to a stopped server: %v, want Unavailable", i, err)
		}
	}
	_, err = client.Check(ctx, &healthpb.HealthCheckRequest{})
	var open *circuit.OpenError
	if !errors.As(err, &open) {
		t.Fatalf("Check after three Unavailable: %v, want *circuit.OpenError", err)
	}

	serve(t, addr)
	time.Sleep(1100 * time.Millisecond) // the cooldown
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Check after the restart: %v, %v", resp, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := state(t, b); s != "closed" {
		t.Fatalf("after a successful probe the circuit is %s, want closed", s)
	}
}

// TestWatchProbeClosesCircuit checks that a Watch admitted as the
// half-open probe closes the circuit at its first message. A Watch of a
// healthy service stays open; settled at its end, it would hold the
// probe's claim, and every Check would be rejected meanwhile.
func TestWatchProbeClosesCircuit(t *testing.T) {
	addr, srv := serve(t, "")
	client, b := dial(t, addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	srv.Stop()
	for range 3 {
		_, _ = client.Check(ctx, &healthpb.HealthCheckRequest{})
	}
	if s := state(t, b); s != "open" {
		t.Fatalf("after three Unavailable the circuit is %s, want open", s)
	}
	serve(t, addr)
	time.Sleep(1100 * time.Millisecond) // the cooldown
	watch, err := client.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("the probe's Watch: %v", err)
	}
	resp, err := watch.Recv()
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("the probe's first message: %v, %v; want SERVING", resp, err)
	}
	if s := state(t, b); s != "closed" {
		t.Fatalf("after the probe's first message the circuit is %s, want closed", s)
	}
	if _, err := client.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("Check beside the open Watch: %v", err)
	}
}

func state(t *testing.T, b *circuit.Breaker) string {
	t.Helper()
	s, err := b.Snapshot(context.Background(), "health")
	if err != nil {
		t.Fatal(err)
	}
	return s.State.String()
}
