package httpguard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/httpguard"
)

// serveError serves err through WriteError on a real server, answering 418
// itself when WriteError declines, and returns the response and its body.
func serveError(t *testing.T, err error) (*http.Response, []byte) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpguard.WriteError(w, r, err) {
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	t.Cleanup(srv.Close)
	req, rerr := http.NewRequest(http.MethodGet, srv.URL, nil)
	if rerr != nil {
		t.Fatal(rerr)
	}
	return send(t, srv.Client(), req)
}

func TestWriteError(t *testing.T) {
	tests := []struct {
		name string
		// err makes the error to serve with the fixture.
		err func(t *testing.T, f *fixture) error
		// status and typ are the expected status and problem type; 418
		// means WriteError declined.
		status int
		typ    string
		// retryAfter is the expected Retry-After range; 0 means absent.
		retryMin, retryMax int
		circuit            string
		detail             string // a part of the expected detail
		openUntil          bool
		forced             bool
		// hidden must not appear in the response.
		hidden func(f *fixture) []string
	}{
		{
			name: "open circuit",
			err: func(t *testing.T, f *fixture) error {
				f.open(t, "billing-api")
				return f.b.Run(context.Background(), "billing-api", policy, func(context.Context) (circuit.Outcome, error) {
					t.Error("operation ran on an open circuit")
					return circuit.Success, nil
				})
			},
			status: 503, typ: httpguard.TypeCircuitOpen, retryMin: 599, retryMax: 600,
			circuit: "billing-api", detail: "retry after 600 seconds", openUntil: true,
		},
		{
			name: "open circuit wrapped twice",
			err: func(t *testing.T, f *fixture) error {
				f.open(t, "search")
				err := f.b.Run(context.Background(), "search", policy, nil)
				return fmt.Errorf("handler: %w", errors.Join(errors.New("other"), fmt.Errorf("lookup: %w", err)))
			},
			status: 503, typ: httpguard.TypeCircuitOpen, retryMin: 599, retryMax: 600,
			circuit: "search", openUntil: true,
		},
		{
			name: "half-open with a probe in flight",
			err: func(t *testing.T, f *fixture) error {
				f.halfOpen(t, "mail")
				return f.b.Run(context.Background(), "mail", policy, nil)
			},
			status: 503, typ: httpguard.TypeCircuitOpen, retryMin: 3599, retryMax: 3600,
			circuit: "mail", detail: "being probed for recovery", openUntil: true,
		},
		{
			name: "forced open",
			err: func(t *testing.T, f *fixture) error {
				if err := f.b.ForceOpen(context.Background(), "refunds", 90*time.Second); err != nil {
					t.Fatal(err)
				}
				return f.b.Run(context.Background(), "refunds", policy, nil)
			},
			status: 503, typ: httpguard.TypeCircuitOpen, retryMin: 89, retryMax: 90,
			circuit: "refunds", detail: "held off by an operator; retry after 90 seconds", openUntil: true, forced: true,
		},
		{
			name: "open error with a short deadline",
			err: func(*testing.T, *fixture) error {
				return &circuit.OpenError{Name: "x", State: circuit.StateOpen, Until: time.Now()}
			},
			status: 503, typ: httpguard.TypeCircuitOpen, retryMin: 1, retryMax: 1, circuit: "x", openUntil: true,
		},
		{
			name: "corrupt record",
			err: func(t *testing.T, f *fixture) error {
				f.corrupt(t, "ledger")
				return f.b.Run(context.Background(), "ledger", policy, func(context.Context) (circuit.Outcome, error) {
					t.Error("operation ran with a corrupt record")
					return circuit.Success, nil
				})
			},
			status: 503, typ: httpguard.TypeCircuitUnavailable, circuit: "ledger", detail: "was not attempted",
			hidden: func(f *fixture) []string {
				return []string{f.dir, circuit.Key("ledger"), ".json", "corrupt", "load", "invalid character"}
			},
		},
		{
			name: "settling failed after the operation ran",
			err: func(*testing.T, *fixture) error {
				return &circuit.StateError{Name: "payments", Op: "replace", Ran: true,
					Err:     errors.New("rename /var/lib/secret/abc.json: no space left on device"),
					CallErr: errors.New("charge declined for account 1234")}
			},
			status: 503, typ: httpguard.TypeCircuitUnavailable, circuit: "payments", detail: "may have taken effect",
			hidden: func(*fixture) []string { return []string{"/var/lib", "space", "1234", "replace"} },
		},
		{
			name: "state error takes precedence over an open error it carries",
			err: func(*testing.T, *fixture) error {
				inner := &circuit.OpenError{Name: "inner", State: circuit.StateOpen, Until: time.Now().Add(time.Minute)}
				return &circuit.StateError{Name: "outer", Op: "replace", Ran: true, Err: errors.New("disk"), CallErr: inner}
			},
			status: 503, typ: httpguard.TypeCircuitUnavailable, circuit: "outer",
		},
		{
			name:   "other error is left to the caller",
			err:    func(*testing.T, *fixture) error { return errDown },
			status: http.StatusTeapot,
		},
		{
			name: "config error is left to the caller",
			err: func(*testing.T, *fixture) error {
				return circuit.New(nil).Run(context.Background(), "bad name", policy, nil)
			},
			status: http.StatusTeapot,
		},
		{
			name:   "nil is left to the caller",
			err:    func(*testing.T, *fixture) error { return nil },
			status: http.StatusTeapot,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			resp, body := serveError(t, tt.err(t, f))
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tt.status, body)
			}
			if tt.status == http.StatusTeapot {
				if len(body) != 0 || resp.Header.Get("Content-Type") != "" || resp.Header.Get("Retry-After") != "" {
					t.Fatalf("WriteError wrote something while declining: %v %q", resp.Header, body)
				}
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != httpguard.ProblemContentType {
				t.Errorf("Content-Type = %q", ct)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control = %q", cc)
			}
			ra := resp.Header.Get("Retry-After")
			if tt.retryMax == 0 {
				if ra != "" {
					t.Errorf("Retry-After = %q, want none", ra)
				}
			} else if n, err := strconv.Atoi(ra); err != nil || n < tt.retryMin || n > tt.retryMax {
				t.Errorf("Retry-After = %q, want %d..%d", ra, tt.retryMin, tt.retryMax)
			}
			var p httpguard.Problem
			dec := json.NewDecoder(strings.NewReader(string(body)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			if p.Type != tt.typ || p.Status != tt.status || p.Title == "" || p.Circuit != tt.circuit {
				t.Errorf("problem = %+v", p)
			}
			if !strings.Contains(p.Detail, tt.detail) {
				t.Errorf("detail = %q, want it to contain %q", p.Detail, tt.detail)
			}
			var raw map[string]any
			_ = json.Unmarshal(body, &raw)
			if tt.openUntil {
				s, _ := raw["open_until"].(string)
				at, err := time.Parse(time.RFC3339, s)
				if err != nil || at.Location() != time.UTC || !p.OpenUntil.Equal(at) {
					t.Errorf("open_until = %q (%v), want RFC 3339 UTC", s, err)
				}
				if n, _ := strconv.Atoi(ra); tt.retryMin > 1 && time.Until(at) > time.Duration(n+1)*time.Second {
					t.Errorf("open_until %v is later than Retry-After %ds", at, n)
				}
			} else if _, ok := raw["open_until"]; ok {
				t.Errorf("open_until present: %s", body)
			}
			if forced, ok := raw["forced"]; forced != tt.forced && (tt.forced || ok) {
				t.Errorf("forced = %v (present %t), want %t", forced, ok, tt.forced)
			}
			if tt.hidden != nil {
				for _, s := range tt.hidden(f) {
					if strings.Contains(strings.ToLower(string(body)), strings.ToLower(s)) {
						t.Errorf("body leaks %q: %s", s, body)
					}
				}
			}
		})
	}
}
