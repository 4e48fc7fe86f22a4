package httpclient

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// hostPoster posts to host instead, as a secondary provider.
type hostPoster struct{ url string }

func (p hostPoster) Post(_, contentType string, body io.Reader) (*http.Response, error) {
	return http.Post(p.url, contentType, body)
}

// TestFailedPostKeepsItsFailure posts to a real server that reads the
// body and answers 503, a counted failure. The body was read and cannot
// be made again, so the fallback, a second real server, is not called
// with what is left of it: next's 503 is returned. A Post with no body,
// nil or http.NoBody, falls back.
func TestFailedPostKeepsItsFailure(t *testing.T) {
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
	kit := circuittest.New()
	p := NewGuardedPoster(http.DefaultClient, kit.Breaker, WithPosterFallback(hostPoster{secondary.URL}))

	resp, err := p.Post(primary.URL, "text/plain", strings.NewReader("charge 42"))
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || echoed.Load() != 0 {
		t.Fatalf("Post of a body next read: %d %q, fallback called %d times; want next's 503 and none", resp.StatusCode, got, echoed.Load())
	}

	resp, err = p.Post(primary.URL, "text/plain", nil)
	if err != nil {
		t.Fatalf("Post with no body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || echoed.Load() != 1 {
		t.Fatalf("Post with no body: %d, fallback called %d times; want the fallback's 200 and 1", resp.StatusCode, echoed.Load())
	}

	// http.NoBody is no body either: nothing was read that the fallback lacks.
	resp, err = p.Post(primary.URL, "text/plain", http.NoBody)
	if err != nil {
		t.Fatalf("Post with http.NoBody: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || echoed.Load() != 2 {
		t.Fatalf("Post with http.NoBody: %d, fallback called %d times in all; want the fallback's 200 and 2", resp.StatusCode, echoed.Load())
	}
}
