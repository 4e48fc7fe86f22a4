package grpcstream

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// watcher is the backend: a key "down" fails its stream with Unavailable
// before the first message, "missing" with NotFound, "hang" sends one
// message and waits for the stream's end, "silent" waits for it with no
// message, and any other key streams three values and ends.
type watcher struct {
	streams atomic.Int32 // streams the handler ran
}

func (w *watcher) Watch(in *wrapperspb.StringValue, stream grpc.ServerStreamingServer[wrapperspb.StringValue]) error {
	w.streams.Add(1)
	switch in.GetValue() {
	case "down":
		return status.Error(codes.Unavailable, "backend down")
	case "missing":
		return status.Error(codes.NotFound, "no such key")
	case "hang":
		if err := stream.Send(wrapperspb.String("first")); err != nil {
			return err
		}
		<-stream.Context().Done()
		return stream.Context().Err()
	case "silent":
		<-stream.Context().Done()
		return stream.Context().Err()
	}
	for _, v := range []string{"a", "b", "c"} {
		if err := stream.Send(wrapperspb.String(v)); err != nil {
			return err
		}
	}
	return nil
}

// outcomes records the outcome of each admitted call of the circuit.
type outcomes struct {
	mu   sync.Mutex
	list []circuit.Outcome
}

func (o *outcomes) ObserveTransition(circuit.Transition) {}

func (o *outcomes) ObserveOutcome(_ context.Context, _ string, out circuit.Outcome, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = append(o.list, out)
}

func (o *outcomes) get() []circuit.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]circuit.Outcome(nil), o.list...)
}

// wait returns the outcomes once there are n, failing t after a while.
func (o *outcomes) wait(t *testing.T, n int) []circuit.Outcome {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if got := o.get(); len(got) >= n {
			return got
		}
	}
	t.Fatalf("outcomes %v, want %d of them", o.get(), n)
	return nil
}

// setup starts an in-process gRPC server of the Watcher service and
// returns a guarded client of it, the backend, and the recorded outcomes.
func setup(t *testing.T) (*GuardedWatchClient, *watcher, *outcomes, *circuittest.Kit) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	w := &watcher{}
	srv.RegisterService(&WatcherServiceDesc, w)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStreamInterceptor(failOpen))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	obs := &outcomes{}
	kit := circuittest.New(circuit.WithObserver(obs))
	return NewGuardedWatchClient(NewWatchClient(conn), kit.Breaker), w, obs, kit
}

// openFails marks a context whose stream fails to open.
type openFails struct{}

// failOpen is a client interceptor failing the opening of a stream whose
// context is marked with openFails, as a connection that cannot be made
// does: with Unavailable, before the stream exists.
func failOpen(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if ctx.Value(openFails{}) != nil {
		return nil, status.Error(codes.Unavailable, "no connection")
	}
	return streamer(ctx, desc, cc, method, opts...)
}

// readAll reads s to its end and returns the values and the error that
// ended it.
func readAll(s grpc.ServerStreamingClient[wrapperspb.StringValue]) ([]string, error) {
	var vs []string
	for {
		m, err := s.Recv()
		if err != nil {
			return vs, err
		}
		vs = append(vs, m.GetValue())
	}
}

// TestUnavailableAtRecvOpensCircuit checks that a backend failing every
// stream with Unavailable at the first Recv, the stream having opened,
// counts a failure a stream and opens the circuit at its threshold: the
// next call fails fast with the *circuit.OpenError, the backend unasked.
func TestUnavailableAtRecvOpensCircuit(t *testing.T) {
	client, w, obs, kit := setup(t)
	ctx := context.Background()
	for i := range 3 {
		s, err := client.Watch(ctx, wrapperspb.String("down"))
		if err != nil {
			t.Fatalf("stream %d: Watch: %v, want the stream open", i, err)
		}
		if _, err := readAll(s); status.Code(err) != codes.Unavailable {
			t.Fatalf("stream %d: Recv: %v, want Unavailable", i, err)
		}
	}
	if got := obs.get(); len(got) != 3 || got[0] != circuit.Failure || got[1] != circuit.Failure || got[2] != circuit.Failure {
		t.Fatalf("outcomes %v, want three Failures", got)
	}
	kit.RequireState(t, "watch", circuit.StateOpen)
	_, err := client.Watch(ctx, wrapperspb.String("down"))
	var open *circuit.OpenError
	if !errors.As(err, &open) || open.Name != "watch" {
		t.Fatalf("Watch of an open circuit: %v, want a *circuit.OpenError of watch", err)
	}
	if n := w.streams.Load(); n != 3 {
		t.Errorf("the backend ran %d streams, want 3: the rejected call reached it", n)
	}
}

// TestStreamReadToEOFSucceeds checks that a stream read to io.EOF is one
// success, settled at its end, whatever is read after it.
func TestStreamReadToEOFSucceeds(t *testing.T) {
	client, _, obs, _ := setup(t)
	s, err := client.Watch(context.Background(), wrapperspb.String("key"))
	if err != nil {
		t.Fatal(err)
	}
	if got := obs.get(); len(got) != 0 {
		t.Fatalf("outcomes %v when the stream opened, want none before its end", got)
	}
	vs, err := readAll(s)
	if err != io.EOF || len(vs) != 3 {
		t.Fatalf("read %v, %v; want three values and io.EOF", vs, err)
	}
	if _, err := s.Recv(); err != io.EOF {
		t.Fatalf("Recv after the end: %v, want io.EOF", err)
	}
	if got := obs.get(); len(got) != 1 || got[0] != circuit.Success {
		t.Fatalf("outcomes %v, want one Success", got)
	}
}

// TestDroppedStreamIsIgnored checks that a stream dropped before its end,
// by cancelling its context, is settled once, Ignored.
func TestDroppedStreamIsIgnored(t *testing.T) {
	client, _, obs, _ := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := client.Watch(ctx, wrapperspb.String("hang"))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := s.Recv(); err != nil || m.GetValue() != "first" {
		t.Fatalf("Recv = %v, %v; want first", m, err)
	}
	cancel()
	if got := obs.wait(t, 1); len(got) != 1 || got[0] != circuit.Ignored {
		t.Fatalf("outcomes %v, want one Ignored", got)
	}
	_, _ = readAll(s) // the stream's end after it was settled counts nothing
	time.Sleep(20 * time.Millisecond)
	if got := obs.get(); len(got) != 1 {
		t.Fatalf("outcomes %v, want the one Ignored", got)
	}
}

// TestCloseSendSettlesNothing checks that CloseSend on a server stream,
// which only closes the send side it never used (code often calls it at
// once, or defers it), settles nothing: the stream's Recv still does, and
// a failing stream counts.
func TestCloseSendSettlesNothing(t *testing.T) {
	client, _, obs, kit := setup(t)
	for i := range 3 {
		s, err := client.Watch(context.Background(), wrapperspb.String("down"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := readAll(s); status.Code(err) != codes.Unavailable {
			t.Fatalf("stream %d: Recv after CloseSend: %v, want Unavailable", i, err)
		}
	}
	if got := obs.get(); len(got) != 3 || got[0] != circuit.Failure || got[2] != circuit.Failure {
		t.Fatalf("outcomes %v, want three Failures", got)
	}
	kit.RequireState(t, "watch", circuit.StateOpen)
}

// TestProbeStreamSettlesAtFirstMessage checks that a half-open circuit's
// probe is the stream until its first message: calls are rejected while
// it waits; dropped first, it gives the probe back at once (the circuit
// reopens for its cooldown, as for any Ignored probe). Its first message
// answers the probe, a success that closes the circuit: a stream that
// stays open, a watch, holds no claim after it.
func TestProbeStreamSettlesAtFirstMessage(t *testing.T) {
	client, w, obs, kit := setup(t)
	kit.HalfOpen("watch")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := client.Watch(ctx, wrapperspb.String("silent")); err != nil {
		t.Fatalf("the probe's Watch: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); w.streams.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // until the backend runs it
	}
	var open *circuit.OpenError
	if _, err := client.Watch(context.Background(), wrapperspb.String("key")); !errors.As(err, &open) {
		t.Fatalf("Watch while the probe waits for its first message: %v, want a *circuit.OpenError", err)
	}
	cancel()
	if got := obs.wait(t, 1); got[0] != circuit.Ignored {
		t.Fatalf("the dropped probe's outcome %v, want Ignored", got)
	}
	kit.RequireState(t, "watch", circuit.StateOpen)
	kit.Advance(time.Minute)

	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	watch, err := client.Watch(wctx, wrapperspb.String("hang"))
	if err != nil {
		t.Fatalf("Watch after the probe was given back: %v", err)
	}
	if m, err := watch.Recv(); err != nil || m.GetValue() != "first" {
		t.Fatalf("Recv = %v, %v; want first", m, err)
	}
	kit.RequireState(t, "watch", circuit.StateClosed)
	s, err := client.Watch(context.Background(), wrapperspb.String("key"))
	if err != nil {
		t.Fatalf("Watch beside the open watch: %v", err)
	}
	if _, err := readAll(s); err != io.EOF {
		t.Fatal(err)
	}
	stop()
	_, _ = readAll(watch) // its end, after its first message answered the probe, counts nothing
	time.Sleep(20 * time.Millisecond)
	if got := obs.get(); len(got) != 3 || got[1] != circuit.Success || got[2] != circuit.Success {
		t.Errorf("outcomes %v, want Ignored, then Success twice", got)
	}
	if n := w.streams.Load(); n != 3 {
		t.Errorf("the backend ran %d streams, want 3", n)
	}
}

// TestRecvErrorIsClassified checks that an error at Recv counts as the
// method's selection says, as a returned error would: NotFound, not
// selected, is Ignored and leaves the circuit closed.
func TestRecvErrorIsClassified(t *testing.T) {
	client, _, obs, kit := setup(t)
	for range 5 {
		s, err := client.Watch(context.Background(), wrapperspb.String("missing"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := readAll(s); status.Code(err) != codes.NotFound {
			t.Fatalf("Recv: %v, want NotFound", err)
		}
	}
	for _, o := range obs.get() {
		if o != circuit.Ignored {
			t.Fatalf("outcomes %v, want only Ignored", obs.get())
		}
	}
	if n := len(obs.get()); n != 5 {
		t.Fatalf("%d outcomes, want one a stream", n)
	}
	kit.RequireState(t, "watch", circuit.StateClosed)
}

// TestOpenErrorSettles checks that a stream that fails to open settles its
// call then, classified as a returned error is: Unavailable is a failure,
// and the circuit opens at its threshold.
func TestOpenErrorSettles(t *testing.T) {
	client, w, obs, kit := setup(t)
	ctx := context.WithValue(context.Background(), openFails{}, true)
	for i := range 3 {
		if _, err := client.Watch(ctx, wrapperspb.String("key")); status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d: Watch: %v, want Unavailable at open", i, err)
		}
		if got := obs.get(); len(got) != i+1 || got[i] != circuit.Failure {
			t.Fatalf("outcomes %v after %d failed opens, want as many Failures", got, i+1)
		}
	}
	kit.RequireState(t, "watch", circuit.StateOpen)
	if n := w.streams.Load(); n != 0 {
		t.Errorf("the backend ran %d streams, want none", n)
	}
}
