package fakeclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// hostDoer sends each request to host, or with no host where it is
// addressed, each on a new connection: a reused one would let the
// transport retry a spent body from GetBody itself.
type hostDoer struct{ host string }

var oneShot = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func (d hostDoer) Do(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	if d.host != "" {
		out.URL.Host, out.Host = d.host, ""
	}
	return oneShot.Do(out)
}

func (d hostDoer) Send(ctx context.Context, req *http.Request) (*http.Response, error) {
	return d.Do(req.WithContext(ctx))
}

// onlyReader hides a reader's type, so that http.NewRequest cannot set
// GetBody.
type onlyReader struct{ io.Reader }

// TestFailedFallbackSendsTheBodyAgain posts to a real server that reads
// the body and answers 503, a counted failure whose fallback posts to a
// second real server. The fallback's request carries the whole body
// again, from GetBody; a body with no GetBody cannot be sent again, so
// the failure is returned and the second server never called.
func TestFailedFallbackSendsTheBodyAgain(t *testing.T) {
	primary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(primary.Close)
	var echoed atomic.Int64
	secondary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echoed.Add(1)
		_, _ = io.Copy(w, r.Body)
	}))
	t.Cleanup(secondary.Close)
	host, err := url.Parse(secondary.URL)
	if err != nil {
		t.Fatal(err)
	}
	kit := circuittest.New()
	g := NewGuardedDoer(hostDoer{}, kit.Breaker, WithDoerFallback(hostDoer{host.Host}))

	for _, do := range []func(*http.Request) (*http.Response, error){
		g.Do,
		func(req *http.Request) (*http.Response, error) { return g.Send(t.Context(), req) },
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, primary.URL, strings.NewReader("charge 42"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := do(req)
		if err != nil {
			t.Fatalf("a replayable body: %v", err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(got) != "charge 42" {
			t.Fatalf("the fallback answered %d %q, want 200 %q", resp.StatusCode, got, "charge 42")
		}
	}
	echoed.Store(0)

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, primary.URL, onlyReader{strings.NewReader("charge 43")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.Do(req)
	if err != nil {
		t.Fatalf("Do with a body sent once: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || echoed.Load() != 0 {
		t.Fatalf("a body that cannot be sent again: %d, fallback called %d times; want next's 503 and 0", resp.StatusCode, echoed.Load())
	}
}
