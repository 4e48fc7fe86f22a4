package httpguard_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/httpguard"
)

// upstream is a real HTTP server answering with a status the test sets,
// counting the requests that reach it.
type upstream struct {
	*httptest.Server
	status atomic.Int64
	hits   atomic.Int64
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.status.Store(http.StatusOK)
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		w.WriteHeader(int(u.status.Load()))
	}))
	t.Cleanup(u.Close)
	return u
}

// clock is a settable clock for a Breaker.
type clock struct{ t atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.t.Load()) }
func (c *clock) advance(d time.Duration) { c.t.Add(int64(d)) }

// step is one request through the guarded client: the status the upstream
// answers with (0: the upstream is down), and what the caller sees.
type step struct {
	status   int
	wantCode int  // the response's status; 0 when an error is wanted
	wantOpen bool // the error is the circuit's rejection
	wantHit  bool // the request reached the upstream
}

func TestGuardedTransport(t *testing.T) {
	ok := step{status: 200, wantCode: 200, wantHit: true}
	unavailable := step{status: 503, wantCode: 503, wantHit: true}
	rejected := step{status: 200, wantOpen: true}
	down := step{status: 0}
	tests := []struct {
		name         string
		steps        []step
		wantState    string
		wantFailures int
	}{
		{"503s open the circuit, which rejects without reaching the server",
			[]step{unavailable, unavailable, unavailable, rejected, rejected}, "open", 3},
		{"502 and 504 count too", []step{{status: 502, wantCode: 502, wantHit: true}, {status: 504, wantCode: 504, wantHit: true}}, "closed", 2},
		{"a 200 resets the count", []step{unavailable, unavailable, ok, unavailable, unavailable}, "closed", 2},
		{"other statuses are no failures", []step{{status: 500, wantCode: 500, wantHit: true}, {status: 404, wantCode: 404, wantHit: true}, unavailable}, "closed", 1},
		{"a closed server counts", []step{down, down, down, rejected}, "open", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			up := newUpstream(t)
			client := &http.Client{Transport: httpguard.NewTransport(nil, f.b.Circuit("upstream", policy))}
			target := up.URL
			for i, s := range tt.steps {
				if s.status == 0 {
					up.Close() // refused from now on
				} else {
					up.status.Store(int64(s.status))
				}
				before := up.hits.Load()
				resp, err := client.Get(target)
				if resp != nil {
					resp.Body.Close()
				}
				if hit := up.hits.Load() > before; hit != s.wantHit {
					t.Fatalf("step %d: reached the server: %v, want %v", i, hit, s.wantHit)
				}
				var ue *url.Error
				if err != nil && !errors.As(err, &ue) {
					t.Fatalf("step %d: the client's error is a %T, want a *url.Error", i, err)
				}
				switch {
				case s.wantOpen:
					var oe *circuit.OpenError
					if !errors.As(err, &oe) || oe.Name != "upstream" {
						t.Fatalf("step %d: err = %v, want the circuit's rejection", i, err)
					}
				case s.wantCode != 0:
					if err != nil || resp.StatusCode != s.wantCode {
						t.Fatalf("step %d: got %v, %v; want status %d", i, resp, err, s.wantCode)
					}
				default:
					if err == nil || errors.Is(err, circuit.ErrOpen) {
						t.Fatalf("step %d: err = %v, want a transport error", i, err)
					}
				}
			}
			snap, err := f.b.Snapshot(context.Background(), "upstream")
			if err != nil {
				t.Fatal(err)
			}
			if snap.State.String() != tt.wantState || snap.Failures != tt.wantFailures {
				t.Fatalf("circuit is %s with %d failures, want %s with %d", snap.State, snap.Failures, tt.wantState, tt.wantFailures)
			}
		})
	}
}

func TestGuardedTransportProbe(t *testing.T) {
	f := newFixture(t)
	clk := &clock{}
	clk.advance(time.Duration(time.Now().UnixNano()))
	b := circuit.New(f.store, circuit.WithClock(clk.now))
	up := newUpstream(t)
	client := &http.Client{Transport: httpguard.NewGuardedTransport(http.DefaultTransport, b)}
	up.status.Store(http.StatusServiceUnavailable)
	for range 5 { // the manifest's threshold
		resp, err := client.Get(up.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if _, err := client.Get(up.URL); !errors.Is(err, circuit.ErrOpen) {
		t.Fatalf("after 5 failures: err = %v, want the circuit open", err)
	}
	clk.advance(30 * time.Second) // the manifest's cooldown
	up.status.Store(http.StatusOK)
	resp, err := client.Get(up.URL)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("probe: %v, %v", resp, err)
	}
	resp.Body.Close()
	snap, err := b.Snapshot(context.Background(), "http-transport")
	if err != nil {
		t.Fatal(err)
	}
	if snap.State != circuit.StateClosed || snap.Generation != 2 {
		t.Fatalf("after the probe: %s, generation %d; want closed, generation 2", snap.State, snap.Generation)
	}
}

func TestGuardedTransportIgnoresCanceledRequests(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	client := &http.Client{Transport: httpguard.NewTransport(nil, f.b.Circuit("upstream", circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: time.Second}))}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := client.Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	snap, err := f.b.Snapshot(context.Background(), "upstream")
	if err != nil {
		t.Fatal(err)
	}
	if snap.State != circuit.StateClosed || snap.Failures != 0 {
		t.Fatalf("a canceled request changed the circuit: %s, %d failures", snap.State, snap.Failures)
	}
}

// closeRecorder is a request body that records being closed.
type closeRecorder struct {
	closed atomic.Bool
}

func (c *closeRecorder) Read([]byte) (int, error) { return 0, io.EOF }
func (c *closeRecorder) Close() error             { c.closed.Store(true); return nil }

// TestRejectedRequestBodyIsClosed checks the RoundTripper contract on
// rejection: http.Client relies on the transport to close a request's body
// even when it is never sent.
func TestRejectedRequestBodyIsClosed(t *testing.T) {
	f := newFixture(t)
	up := newUpstream(t)
	up.status.Store(http.StatusServiceUnavailable)
	rt := httpguard.NewTransport(nil, f.b.Circuit("upstream", policy))
	for range policy.FailureThreshold {
		req, _ := http.NewRequest(http.MethodPost, up.URL, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	body := &closeRecorder{}
	req, _ := http.NewRequest(http.MethodPost, up.URL, body)
	before := up.hits.Load()
	if _, err := rt.RoundTrip(req); !errors.Is(err, circuit.ErrOpen) {
		t.Fatalf("err = %v, want the circuit's rejection", err)
	}
	if up.hits.Load() != before {
		t.Fatal("a rejected request reached the server")
	}
	if !body.closed.Load() {
		t.Fatal("the rejected request's body was not closed")
	}
}

// trackedBody records whether the caller closed a response body.
type trackedBody struct {
	io.ReadCloser
	closed *atomic.Int32
}

func (b trackedBody) Close() error { b.closed.Add(1); return b.ReadCloser.Close() }

// trackingRT counts the responses it obtained and the bodies closed.
type trackingRT struct {
	next           http.RoundTripper
	opened, closed atomic.Int32
}

func (t *trackingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if resp != nil {
		t.opened.Add(1)
		resp.Body = trackedBody{resp.Body, &t.closed}
	}
	return resp, err
}

// TestTransportClosesResponseOnStateError: when the store cannot record
// the outcome of a call that ran (a 503 that counts as a failure),
// RoundTrip returns the StateError and no response, its body closed, as
// http.RoundTripper requires: http.Client would drop a response returned
// with an error, and nobody could close its body.
func TestTransportClosesResponseOnStateError(t *testing.T) {
	f := newFixture(t)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer upstream.Close()

	// Make the store's writes fail: each circuit's lock file is a directory.
	for _, name := range []string{"billing-api", "billing-api-2"} {
		if err := os.MkdirAll(filepath.Join(f.dir, circuit.Key(name)+".lock"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	inner := &trackingRT{next: upstream.Client().Transport}
	gt := httpguard.NewTransport(inner, f.b.Circuit("billing-api", policy))
	req, _ := http.NewRequest(http.MethodGet, upstream.URL, nil)
	resp, err := gt.RoundTrip(req)
	if _, ok := errors.AsType[*circuit.StateError](err); !ok {
		t.Fatalf("RoundTrip err = %v, want a StateError (store write failed)", err)
	}
	if resp != nil {
		t.Errorf("RoundTrip returned a %d response together with error %q: http.RoundTripper requires err == nil when a response was obtained", resp.StatusCode, err)
		resp.Body.Close()
	}

	// Through an http.Client the response is dropped and never closed.
	inner2 := &trackingRT{next: upstream.Client().Transport}
	client := &http.Client{Transport: httpguard.NewTransport(inner2, f.b.Circuit("billing-api-2", policy))}
	r2, err := client.Get(upstream.URL)
	if err == nil {
		r2.Body.Close()
		t.Fatal("want an error")
	}
	if r2 != nil {
		t.Fatal("client returned a response with an error")
	}
	if o, c := inner2.opened.Load(), inner2.closed.Load(); o != c {
		t.Errorf("client.Get: %v\nupstream responses obtained %d, bodies closed %d: the body (and its connection) leaked", err, o, c)
	}
}
