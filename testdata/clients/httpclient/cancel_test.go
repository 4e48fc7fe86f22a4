package httpclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuittest"
)

// TestCallerCancellationIsIgnored sends requests to a healthy but slow
// provider whose callers give up first: net/http reports each as a
// *url.Error, which is selected, yet the circuit stays closed, as the
// provider did not fail; with context.Canceled selected explicitly the
// same cancellations open it. A provider that is down still opens it.
func TestCallerCancellationIsIgnored(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	kit := circuittest.New()
	doer := NewGuardedDoer(srv.Client(), kit.Breaker)
	counting := NewGuardedCancelCounting(srv.Client(), kit.Breaker)
	giveUp := func(do func(*http.Request) (*http.Response, error)) error {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Millisecond, cancel)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for range 5 {
		var ue *url.Error
		if err := giveUp(doer.Do); !errors.As(err, &ue) || !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled request: %v, want a *url.Error carrying context.Canceled", err)
		}
	}
	if s, _ := kit.Breaker.Snapshot(context.Background(), "provider"); s.State != circuit.StateClosed || s.Failures != 0 {
		t.Fatalf("after 5 callers gave up: %+v, want closed with no failure", s)
	}
	for range 3 {
		giveUp(counting.Do)
	}
	if s, _ := kit.Breaker.Snapshot(context.Background(), "provider-cancel"); s.State != circuit.StateOpen {
		t.Fatalf("after 3 cancellations with context.Canceled selected: %+v, want open", s)
	}

	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, downURL, nil)
		if _, err := doer.Do(req); err == nil {
			t.Fatal("a request to a closed server succeeded")
		}
	}
	if s, _ := kit.Breaker.Snapshot(context.Background(), "provider"); s.State != circuit.StateOpen {
		t.Fatalf("after 3 refused connections: %+v, want open", s)
	}
}
