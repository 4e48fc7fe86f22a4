package httpguard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/httpguard"
)

// backend is a handler whose next responses are scripted; it counts calls.
type backend struct {
	mu     sync.Mutex
	script []int // statuses to answer, in order, the last one to every later call; -1 panics
	calls  atomic.Int32
}

func (h *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.calls.Add(1)
	// A client may send a request again on a new connection when the
	// handler panicked before answering (Go 1.27's transport does for a
	// GET): the last entry answers every later call, so a retry neither
	// runs off the script nor panics with the mutex held.
	h.mu.Lock()
	status := h.script[0]
	if len(h.script) > 1 {
		h.script = h.script[1:]
	}
	h.mu.Unlock()
	if status == -1 {
		panic(http.ErrAbortHandler)
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "served\n")
}

// guarded serves h behind Middleware on a real server and returns its URL
// and a client.
func guarded(t *testing.T, f *fixture, h http.Handler, opts ...httpguard.Option) (string, *http.Client) {
	t.Helper()
	srv := httptest.NewServer(httpguard.Middleware(f.b, "inventory", policy, opts...)(h))
	t.Cleanup(srv.Close)
	return srv.URL, srv.Client()
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := send(t, c, req)
	return resp, string(body)
}

func TestMiddlewareClassifiesStatuses(t *testing.T) {
	tests := []struct {
		name     string
		opts     []httpguard.Option
		script   []int // the handler's statuses, one request each
		state    circuit.State
		failures int
	}{
		{name: "three 5xx open", script: []int{500, 502, 504}, state: circuit.StateOpen, failures: 3},
		{name: "503 counts", script: []int{503, 503, 503}, state: circuit.StateOpen, failures: 3},
		{name: "a success resets the count", script: []int{500, 500, 200, 500, 500}, state: circuit.StateClosed, failures: 2},
		{name: "4xx is success", script: []int{500, 500, 404, 500}, state: circuit.StateClosed, failures: 1},
		{name: "501 is not a failure", script: []int{501, 501, 501}, state: circuit.StateClosed},
		{name: "a panic is ignored", script: []int{500, 500, -1}, state: circuit.StateClosed, failures: 2},
		{name: "selected statuses", opts: []httpguard.Option{httpguard.WithFailureStatuses(429)},
			script: []int{500, 429, 429, 429}, state: circuit.StateOpen, failures: 3},
		{name: "classifier", opts: []httpguard.Option{httpguard.WithClassifier(func(r *http.Request, status int) circuit.Outcome {
			if status == http.StatusTeapot {
				return circuit.Failure
			}
			return circuit.Ignored
		})}, script: []int{418, 500, 200, 418}, state: circuit.StateClosed, failures: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			h := &backend{script: append([]int(nil), tt.script...)}
			url, c := guarded(t, f, h, append(tt.opts, httpguard.WithLogger(slog.New(slog.DiscardHandler)))...)
			for _, want := range tt.script {
				resp, err := c.Get(url)
				if want == -1 {
					if err == nil {
						resp.Body.Close()
						t.Fatal("a panicking handler answered")
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Fatalf("status = %d, want the handler's %d", resp.StatusCode, want)
				}
			}
			snap, err := f.b.Snapshot(context.Background(), "inventory")
			if err != nil {
				t.Fatal(err)
			}
			if snap.State != tt.state || snap.Failures != tt.failures {
				t.Errorf("circuit %v with %d failures, want %v with %d", snap.State, snap.Failures, tt.state, tt.failures)
			}
		})
	}
}

func TestMiddlewareRejectsWhileOpen(t *testing.T) {
	f := newFixture(t)
	h := &backend{script: []int{500, 500, 500, 200}}
	url, c := guarded(t, f, h)
	for range 3 {
		resp, _ := get(t, c, url)
		if resp.StatusCode != 500 {
			t.Fatalf("status = %d, want the handler's 500", resp.StatusCode)
		}
	}
	for range 2 {
		resp, body := get(t, c, url)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "600" {
			t.Fatalf("status %d, Retry-After %q, want 503 and 600", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		var p httpguard.Problem
		if err := json.Unmarshal([]byte(body), &p); err != nil || p.Type != httpguard.TypeCircuitOpen || p.Circuit != "inventory" {
			t.Fatalf("problem %s: %v", body, err)
		}
	}
	if n := h.calls.Load(); n != 3 {
		t.Errorf("handler called %d times, want 3: an open circuit must not call it", n)
	}
}

func TestMiddlewareProbe(t *testing.T) {
	tests := []struct {
		name   string
		status int
		state  circuit.State
		gen    uint64
	}{
		{name: "success closes", status: 200, state: circuit.StateClosed, gen: 2},
		{name: "failure reopens", status: 502, state: circuit.StateOpen, gen: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			past := circuit.New(f.store, circuit.WithClock(func() time.Time { return time.Now().Add(-time.Minute) }))
			f.fail(t, past, "inventory", circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second}, 1)
			release := make(chan struct{})
			probing := make(chan struct{})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(probing)
				<-release
				w.WriteHeader(tt.status)
			})
			url, c := guarded(t, f, h)
			done := make(chan int)
			go func() {
				resp, err := c.Get(url)
				if err != nil {
					t.Error(err)
					close(done)
					return
				}
				resp.Body.Close()
				done <- resp.StatusCode
			}()
			<-probing
			if resp, _ := get(t, c, url); resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("a second request during the probe got %d, want 503", resp.StatusCode)
			}
			close(release)
			if got := <-done; got != tt.status {
				t.Errorf("probe got %d, want %d", got, tt.status)
			}
			snap, err := f.b.Snapshot(context.Background(), "inventory")
			if err != nil {
				t.Fatal(err)
			}
			if snap.State != tt.state || snap.Generation != tt.gen {
				t.Errorf("after the probe: %v generation %d, want %v generation %d", snap.State, snap.Generation, tt.state, tt.gen)
			}
		})
	}
}

func TestMiddlewareStateErrorHidesInternals(t *testing.T) {
	f := newFixture(t)
	f.corrupt(t, "inventory")
	var logs bytes.Buffer
	h := &backend{script: []int{200}}
	url, c := guarded(t, f, h, httpguard.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	resp, body := get(t, c, url)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Content-Type") != httpguard.ProblemContentType {
		t.Fatalf("status %d %q, want a 503 problem", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("Retry-After") != "" {
		t.Errorf("Retry-After %q on a state error", resp.Header.Get("Retry-After"))
	}
	var p httpguard.Problem
	if err := json.Unmarshal([]byte(body), &p); err != nil || p.Type != httpguard.TypeCircuitUnavailable || p.Circuit != "inventory" {
		t.Fatalf("problem %s: %v", body, err)
	}
	for _, s := range []string{f.dir, circuit.Key("inventory"), "corrupt"} {
		if strings.Contains(body, s) {
			t.Errorf("response leaks %q: %s", s, body)
		}
	}
	if h.calls.Load() != 0 {
		t.Error("the handler ran although the circuit's state is unreadable")
	}
	if !strings.Contains(logs.String(), "corrupt") || !strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("the cause was not logged: %s", logs.String())
	}
}

func TestMiddlewareIgnoresAbandonedRequests(t *testing.T) {
	f := newFixture(t)
	f.fail(t, f.b, "inventory", policy, 2)
	served := make(chan struct{})
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done() // the client goes away; nothing is written
	})
	guard := httpguard.Middleware(f.b, "inventory", policy)(h)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(served)
		guard.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	go func() { <-started; cancel() }()
	if resp, err := srv.Client().Do(req); err == nil {
		resp.Body.Close()
	}
	<-served
	snap, err := f.b.Snapshot(context.Background(), "inventory")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Failures != 2 {
		t.Errorf("failures = %d, want 2: an abandoned request proves nothing", snap.Failures)
	}
}

func TestMiddlewareKeepsFlusher(t *testing.T) {
	f := newFixture(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fl, ok := w.(http.Flusher)
		if !ok {
			t.Error("the guarded ResponseWriter is not an http.Flusher")
			return
		}
		_, _ = io.WriteString(w, "first\n")
		fl.Flush()
		if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Errorf("ResponseController does not reach the connection: %v", err)
		}
		_, _ = io.WriteString(w, "second\n")
	})
	url, c := guarded(t, f, h)
	resp, body := get(t, c, url)
	if resp.StatusCode != 200 || body != "first\nsecond\n" {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
}

func TestMiddlewarePanicsOnBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		circuit string
		policy  circuit.Policy
	}{
		{name: "bad name", circuit: "https://example.com", policy: policy},
		{name: "empty name", circuit: "", policy: policy},
		{name: "negative threshold", circuit: "ok", policy: circuit.Policy{FailureThreshold: -1}},
		{name: "short cooldown", circuit: "ok", policy: circuit.Policy{FailureThreshold: 1, Cooldown: time.Millisecond, ProbeLease: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Error("Middleware accepted an invalid configuration")
				}
			}()
			httpguard.Middleware(circuit.New(nil), tt.circuit, tt.policy)
		})
	}
}

// TestMiddlewareIgnoresClientCancelThroughProxy: a client that gives up
// while a guarded reverse proxy waits on the upstream makes
// httputil.ReverseProxy answer 502 (its default error handler, for
// context.Canceled too). It is no failure of the upstream: three impatient
// clients leave the circuit closed.
func TestMiddlewareIgnoresClientCancelThroughProxy(t *testing.T) {
	f := newFixture(t)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // a healthy but slowish upstream
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = nil
	guard := httpguard.Middleware(f.b, "catalog", policy)(proxy)
	served := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		guard.ServeHTTP(w, r)
		served <- 1
	}))
	defer srv.Close()

	for range policy.FailureThreshold {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if resp, err := srv.Client().Do(req); err == nil {
			resp.Body.Close()
		}
		cancel()
		<-served
	}
	snap, err := f.b.Snapshot(context.Background(), "catalog")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Failures != 0 || snap.State != circuit.StateClosed {
		t.Errorf("after %d clients gave up: state %s, failures %d; want closed with 0: the client's cancellation is not the upstream's failure",
			policy.FailureThreshold, snap.State, snap.Failures)
	}
}

// TestMiddlewareKeepsReaderFrom: the recorder keeps the underlying
// writer's io.ReaderFrom, so io.Copy from a file behind Middleware still
// uses sendfile.
func TestMiddlewareKeepsReaderFrom(t *testing.T) {
	f := newFixture(t)
	var plain, guarded atomic.Bool
	probe := func(flag *atomic.Bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, ok := w.(io.ReaderFrom)
			flag.Store(ok)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/plain", probe(&plain))
	mux.Handle("/guarded", httpguard.Middleware(f.b, "files", policy)(probe(&guarded)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, p := range []string{"/plain", "/guarded"} {
		resp, err := srv.Client().Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if plain.Load() && !guarded.Load() {
		t.Errorf("net/http's writer is an io.ReaderFrom, Middleware's is not")
	}
}

// TestMiddlewareContextEndedBeforeAdmission: a request whose context has
// already ended (the client left while an earlier middleware ran, or the
// server's own deadline passed) is answered with a 503 problem, as every
// request the guard does not admit is, not a bare 500.
func TestMiddlewareContextEndedBeforeAdmission(t *testing.T) {
	f := newFixture(t)
	h := httpguard.Middleware(f.b, "search", policy)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	ctx, cancel := context.WithTimeout(context.Background(), -time.Second) // the server's budget is spent
	defer cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("guard answered %d %q (Content-Type %q) for a request whose context ended, want a 503 problem",
			rec.Code, rec.Body.String(), rec.Header().Get("Content-Type"))
	}
}
