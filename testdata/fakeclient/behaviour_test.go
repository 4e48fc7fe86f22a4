package fakeclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/filestore"
)

// fake is a Client whose results the test sets and whose calls it counts.
type fake struct {
	calls  int
	status int
	err    error
	cancel func() // when set, Fetch calls it: its caller gives up meanwhile
	closed int    // response bodies closed
}

// body is a response body that counts its Close in f.
type body struct {
	io.Reader
	f *fake
}

func (b body) Close() error {
	b.f.closed++
	return nil
}

func (f *fake) Get(ctx context.Context, path string) (*http.Response, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	return &http.Response{StatusCode: f.status, Body: body{strings.NewReader(""), f}}, nil
}

func (f *fake) Post(ctx context.Context, body []byte) error {
	f.calls++
	return f.err
}

func (f *fake) Call(ctx context.Context, method string) error {
	f.calls++
	return f.err
}

func (f *fake) Fetch(path string, ctx context.Context) (*http.Response, error) {
	if f.cancel != nil {
		f.cancel()
	}
	return f.Get(ctx, path)
}

func (f *fake) Name() string { return "fake" }

// newGuarded returns a guarded client over f and a breaker over a fresh
// file store.
func newGuarded(t *testing.T, f *fake) (*GuardedClient, *circuit.Breaker) {
	t.Helper()
	store, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := circuit.New(store)
	return NewGuardedClient(f, b), b
}

func state(t *testing.T, b *circuit.Breaker, name string) string {
	t.Helper()
	snap, err := b.Snapshot(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return snap.State.String()
}

func TestSelectedErrorsOpenTheCircuit(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"type", &ConnError{Addr: "svc:80"}},
		{"wrapped type", errors.Join(errors.New("retrying"), &ConnError{Addr: "svc:80"})},
		{"sentinel", context.DeadlineExceeded},
		{"status on the error", &StatusError{Code: 503}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{err: tt.err}
			g, b := newGuarded(t, f)
			ctx := context.Background()
			for range 2 {
				if _, err := g.Get(ctx, "/"); err != tt.err {
					t.Fatalf("Get: err = %v, want the inner error %v unchanged", err, tt.err)
				}
			}
			if s := state(t, b, "svc"); s != "open" {
				t.Fatalf("state = %s, want open", s)
			}
			_, err := g.Get(ctx, "/")
			var open *circuit.OpenError
			if !errors.As(err, &open) || open.Name != "svc" {
				t.Fatalf("Get on an open circuit: err = %v, want *circuit.OpenError for svc", err)
			}
			if f.calls != 2 {
				t.Fatalf("inner called %d times, want 2: an open circuit must not call it", f.calls)
			}
		})
	}
}

func TestResponseStatusCounts(t *testing.T) {
	f := &fake{status: http.StatusBadGateway}
	g, b := newGuarded(t, f)
	for range 2 {
		resp, err := g.Get(context.Background(), "/")
		if err != nil || resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("Get = %v, %v; want the 502 response", resp, err)
		}
	}
	if s := state(t, b, "svc"); s != "open" {
		t.Fatalf("state after two 502s = %s, want open", s)
	}
}

func TestUnselectedOutcomesCountNothing(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
	}{
		{"other error", io.ErrUnexpectedEOF, 0},
		{"canceled", context.Canceled, 0},
		{"unselected status on the error", &StatusError{Code: 500}, 0},
		{"unselected response status", nil, http.StatusInternalServerError},
		{"success", nil, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{err: tt.err, status: tt.status}
			g, b := newGuarded(t, f)
			for range 5 {
				_, err := g.Get(context.Background(), "/")
				if err != tt.err {
					t.Fatalf("Get: err = %v, want %v unchanged", err, tt.err)
				}
			}
			if f.calls != 5 {
				t.Fatalf("inner called %d times, want 5", f.calls)
			}
			snap, err := b.Snapshot(context.Background(), "svc")
			if err != nil {
				t.Fatal(err)
			}
			if snap.State != circuit.StateClosed || snap.Failures != 0 {
				t.Fatalf("circuit = %s with %d failures, want closed with 0", snap.State, snap.Failures)
			}
		})
	}
}

// TestCodesReadOnlyGRPCStatuses checks that codes=Unknown selects an error
// carrying a gRPC status Unknown, and no error without a status.
func TestCodesReadOnlyGRPCStatuses(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"canceled", context.Canceled, "closed"},
		{"deadline", context.DeadlineExceeded, "closed"},
		{"eof", io.EOF, "closed"},
		{"plain", errors.New("boom"), "closed"},
		{"status ok", status.Error(codes.OK, ""), "closed"},
		{"status not found", status.Error(codes.NotFound, "no"), "closed"},
		{"status unknown", status.Error(codes.Unknown, "?"), "open"},
		{"wrapped status unavailable", fmt.Errorf("call: %w", status.Error(codes.Unavailable, "down")), "open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{err: tt.err}
			g, b := newGuarded(t, f)
			if err := g.Call(context.Background(), "Get"); err != tt.err {
				t.Fatalf("Call: err = %v, want %v unchanged", err, tt.err)
			}
			if s := state(t, b, "svc-rpc"); s != tt.want {
				t.Fatalf("state = %s, want %s", s, tt.want)
			}
		})
	}
}

func TestMethodsHaveTheirOwnCircuit(t *testing.T) {
	f := &fake{err: &ConnError{Addr: "svc:80"}}
	g, b := newGuarded(t, f)
	if err := g.Post(context.Background(), nil); !errors.As(err, new(*ConnError)) {
		t.Fatalf("Post: %v, want the ConnError", err)
	}
	if s := state(t, b, "svc-post"); s != "open" {
		t.Fatalf("svc-post = %s, want open after one failure (threshold=1)", s)
	}
	if s := state(t, b, "svc"); s != "closed" {
		t.Fatalf("svc = %s, want closed", s)
	}
	// A status is not selected for Post: it passes through.
	f.err = &StatusError{Code: 503}
	if _, err := g.Get(context.Background(), "/"); err != f.err {
		t.Fatalf("Get: %v", err)
	}
	if g.Name() != "fake" {
		t.Fatal("Name does not pass through")
	}
}

// TestFailedFallbackOnACountedStatus: under fallback=failed, a response
// whose status counts as a Failure, with no error, is answered by the
// fallback, and its own body closed.
func TestFailedFallbackOnACountedStatus(t *testing.T) {
	f, cache := &fake{status: http.StatusServiceUnavailable}, &fake{status: http.StatusOK}
	store, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g := NewGuardedClient(f, circuit.New(store), WithClientFallback(cache))
	resp, err := g.Fetch("/", context.Background())
	if err != nil || resp.StatusCode != http.StatusOK || cache.calls != 1 {
		t.Fatalf("Fetch = %v, %v (fallback called %d times); want the fallback's 200", resp, err, cache.calls)
	}
	if f.closed != 1 {
		t.Errorf("the 503 response the fallback answered for: body closed %d times, want once", f.closed)
	}
}

// TestContextNotFirst: a method whose context is not its first parameter
// is bounded by it: a call its caller cancelled counts nothing.
func TestContextNotFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fake{err: &ConnError{Addr: "svc:80"}, cancel: cancel}
	g, b := newGuarded(t, f)
	if _, err := g.Fetch("/", ctx); err != f.err {
		t.Fatalf("Fetch = %v, want the inner error", err)
	}
	if s := state(t, b, "svc-fetch"); s != "closed" {
		t.Fatalf("state after a call its caller cancelled = %s, want closed", s)
	}
}
