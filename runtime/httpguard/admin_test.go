package httpguard_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/httpguard"
)

// adminToken is the bearer token the tests' authorizer accepts.
const adminToken = "s3cret-operator-token"

// bearer is the authorizer of the tests: the request must carry adminToken.
func bearer(r *http.Request) error {
	if r.Header.Get("Authorization") != "Bearer "+adminToken {
		return errors.New("no valid bearer token from " + r.RemoteAddr)
	}
	return nil
}

// adminServer serves AdminHandler over f's Breaker on a real server, and
// returns it and what its logger heard.
func adminServer(t *testing.T, f *fixture) (*httptest.Server, *strings.Builder) {
	t.Helper()
	var logs strings.Builder
	srv := httptest.NewServer(httpguard.AdminHandler(f.b, bearer, httpguard.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))))
	t.Cleanup(srv.Close)
	return srv, &logs
}

// adminCall is one request to the admin handler.
type adminCall struct {
	method, contentType, body string
	header                    http.Header // added to the request; nil: the valid token
}

// send makes the request and returns the response and its body.
func (c adminCall) send(t *testing.T, srv *httptest.Server) (*http.Response, []byte) {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, srv.URL+"/debug/circuits/admin", strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.contentType != "-" {
		ct := c.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if c.header == nil {
		req.Header.Set("Authorization", "Bearer "+adminToken)
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	return send(t, srv.Client(), req)
}

// problemOf decodes a problem document, strictly.
func problemOf(t *testing.T, resp *http.Response, body []byte) httpguard.Problem {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != httpguard.ProblemContentType {
		t.Fatalf("Content-Type = %q, want a problem document; body %s", ct, body)
	}
	var p httpguard.Problem
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("problem %s: %v", body, err)
	}
	if p.Status != resp.StatusCode || p.Title == "" || p.Detail == "" {
		t.Errorf("problem %+v for status %d", p, resp.StatusCode)
	}
	return p
}

func TestAdminHandlerNeedsAnAuthorizer(t *testing.T) {
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "without an authorizer") || !strings.Contains(msg, "anyone") {
			t.Errorf("AdminHandler(nil authorizer) panicked with %q, want it to say why", msg)
		}
	}()
	httpguard.AdminHandler(newFixture(t).b, nil)
	t.Error("AdminHandler accepted a nil authorizer")
}

func TestAdminHandlerActs(t *testing.T) {
	f := newFixture(t)
	srv, logs := adminServer(t, f)
	f.closed(t, "billing-api", 1)

	// Open a circuit the store knows: every call is refused, forced, until
	// the end of "for".
	resp, body := adminCall{body: `{"action":"open","circuit":"billing-api","for":"90s"}`}.send(t, srv)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("open: %d %s", resp.StatusCode, body)
	}
	var ans httpguard.AdminResponse
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatal(err)
	}
	if c := ans.Circuit; ans.Action != "open" || c.Name != "billing-api" || c.State.String() != "open" || !c.Forced || c.Failures != 1 ||
		time.Until(c.OpenUntil) < 85*time.Second || time.Until(c.OpenUntil) > 90*time.Second {
		t.Errorf("open answered %+v", ans)
	}
	err := f.b.Run(context.Background(), "billing-api", policy, func(context.Context) (circuit.Outcome, error) {
		t.Error("a call ran on the circuit held open")
		return circuit.Success, nil
	})
	if oe, ok := errors.AsType[*circuit.OpenError](err); !ok || !oe.Forced {
		t.Errorf("a call after open = %v, want a forced *circuit.OpenError", err)
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, `msg="circuit forced open by an admin request" circuit=billing-api`) ||
		!strings.Contains(got, "for=1m30s") || !strings.Contains(got, "remote=127.0.0.1:") {
		t.Errorf("the logger heard %q, want the forced open with its caller", got)
	}

	// Hold it closed instead: every call runs, and failures do not open it.
	resp, body = adminCall{body: `{"action":"close","circuit":"billing-api","for":"1h"}`}.send(t, srv)
	ans = httpguard.AdminResponse{}
	if err := json.Unmarshal(body, &ans); err != nil || resp.StatusCode != http.StatusOK || ans.Action != "close" ||
		ans.Circuit.State.String() != "closed" || !ans.Circuit.Forced {
		t.Fatalf("close: %d %s", resp.StatusCode, body)
	}
	ran := 0
	for range 10 {
		_ = f.b.Run(context.Background(), "billing-api", policy, func(context.Context) (circuit.Outcome, error) {
			ran++
			return circuit.Failure, errors.New("down")
		})
	}
	if ran != 10 {
		t.Errorf("%d of 10 calls ran on the circuit held closed", ran)
	}
	if got := logs.String(); !strings.Contains(got, `msg="circuit forced closed by an admin request" circuit=billing-api`) {
		t.Errorf("the logger heard %q, want the forced closed", got)
	}

	// Clear it: a closed record of a fresh incarnation, no hold, no failures.
	resp, body = adminCall{body: `{"action":"clear","circuit":"billing-api"}`}.send(t, srv)
	ans = httpguard.AdminResponse{}
	if err := json.Unmarshal(body, &ans); err != nil || resp.StatusCode != http.StatusOK || ans.Action != "clear" || ans.Circuit.State.String() != "closed" || ans.Circuit.Failures != 0 || ans.Circuit.Forced {
		t.Errorf("clear: %d %s", resp.StatusCode, body)
	}
	if snap, _ := f.b.Snapshot(context.Background(), "billing-api"); snap.Forced || snap.Failures != 0 || snap.State != circuit.StateClosed {
		t.Errorf("after clear the record is %+v", snap)
	}

	// A corrupt record is cleared, but not opened.
	f.corrupt(t, "ledger")
	resp, body = adminCall{body: `{"action":"open","circuit":"ledger","for":"1h"}`}.send(t, srv)
	if p := problemOf(t, resp, body); resp.StatusCode != http.StatusConflict || p.Circuit != "ledger" || !strings.Contains(p.Detail, "clear it first") {
		t.Errorf("open of a corrupt record: %d %+v", resp.StatusCode, p)
	}
	if resp, body = (adminCall{body: `{"action":"clear","circuit":"ledger"}`}).send(t, srv); resp.StatusCode != http.StatusOK {
		t.Errorf("clear of a corrupt record: %d %s", resp.StatusCode, body)
	}
	if _, err := f.b.Snapshot(context.Background(), "ledger"); err != nil {
		t.Errorf("after clear the corrupt record is still there: %v", err)
	}
}

func TestAdminHandlerNeverSeen(t *testing.T) {
	f := newFixture(t)
	srv, _ := adminServer(t, f)
	for _, body := range []string{`{"action":"open","circuit":"nosuch:circuit","for":"90s"}`, `{"action":"clear","circuit":"nosuch:circuit"}`} {
		resp, got := adminCall{body: body}.send(t, srv)
		p := problemOf(t, resp, got)
		if resp.StatusCode != http.StatusNotFound || p.Type != httpguard.TypeCircuitUnknown || p.Circuit != "nosuch:circuit" {
			t.Errorf("%s: %d %+v", body, resp.StatusCode, p)
		}
		if snap, err := f.b.Snapshot(context.Background(), "nosuch:circuit"); err != nil || snap.Exists {
			t.Fatalf("%s made a record: %+v %v", body, snap, err)
		}
	}
	// A circuit this process calls that never failed has no record, and
	// is held without "new".
	if err := f.b.Run(context.Background(), "email-svc", policy, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
		t.Fatal(err)
	}
	if resp, got := (adminCall{body: `{"action":"open","circuit":"email-svc","for":"90s"}`}).send(t, srv); resp.StatusCode != http.StatusOK {
		t.Errorf("open of a healthy circuit this process calls: %d %s", resp.StatusCode, got)
	}
	// Asked to create it, open does.
	resp, body := adminCall{body: `{"action":"open","circuit":"nosuch:circuit","for":"90s","new":true}`}.send(t, srv)
	var ans httpguard.AdminResponse
	if err := json.Unmarshal(body, &ans); err != nil || resp.StatusCode != http.StatusOK || !ans.Circuit.Exists || !ans.Circuit.Forced {
		t.Errorf("open with new: %d %s", resp.StatusCode, body)
	}
}

func TestAdminHandlerRefuses(t *testing.T) {
	const open = `{"action":"open","circuit":"billing-api","for":"90s"}`
	tests := []struct {
		name   string
		call   adminCall
		status int
		detail string
	}{
		{"GET", adminCall{method: http.MethodGet, contentType: "-"}, http.StatusMethodNotAllowed, "POST"},
		{"no token", adminCall{body: open, header: http.Header{}}, http.StatusForbidden, "not authorized"},
		{"a wrong token", adminCall{body: open, header: http.Header{"Authorization": {"Bearer guess"}}}, http.StatusForbidden, "not authorized"},
		{"a cross-site form, with the operator's token", adminCall{body: "action=open&circuit=billing-api&for=90s", contentType: "application/x-www-form-urlencoded",
			header: http.Header{"Authorization": {"Bearer " + adminToken}, "Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.example"}}},
			http.StatusForbidden, "Cross-origin"},
		{"a cross-site JSON request", adminCall{body: open,
			header: http.Header{"Authorization": {"Bearer " + adminToken}, "Origin": {"https://evil.example"}}},
			http.StatusForbidden, "Cross-origin"},
		{"a simple request (text/plain)", adminCall{body: open, contentType: "text/plain"}, http.StatusUnsupportedMediaType, "application/json"},
		{"a form", adminCall{body: "action=open", contentType: "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, "application/json"},
		{"no content type", adminCall{body: open, contentType: "-"}, http.StatusUnsupportedMediaType, "application/json"},
		{"not JSON", adminCall{body: `open billing-api`}, http.StatusBadRequest, "JSON object"},
		{"an unknown member", adminCall{body: `{"action":"open","circuit":"billing-api","for":"90s","force":true}`}, http.StatusBadRequest, "JSON object"},
		{"two objects", adminCall{body: open + open}, http.StatusBadRequest, "JSON object"},
		{"a body too large", adminCall{body: `{"action":"open","circuit":"` + strings.Repeat("a", 5000) + `"}`}, http.StatusBadRequest, "at most"},
		{"an invalid name", adminCall{body: `{"action":"open","circuit":"https://x/","for":"90s"}`}, http.StatusBadRequest, "not valid"},
		{"an unknown action", adminCall{body: `{"action":"shut","circuit":"billing-api"}`}, http.StatusBadRequest, `"open", "close" or "clear"`},
		{"close without for", adminCall{body: `{"action":"close","circuit":"billing-api"}`}, http.StatusBadRequest, "1s..24h0m0s"},
		{"open without for", adminCall{body: `{"action":"open","circuit":"billing-api"}`}, http.StatusBadRequest, "1s..24h0m0s"},
		{"open for too long", adminCall{body: `{"action":"open","circuit":"billing-api","for":"48h"}`}, http.StatusBadRequest, "1s..24h0m0s"},
		{"open for a number", adminCall{body: `{"action":"open","circuit":"billing-api","for":90}`}, http.StatusBadRequest, "JSON object"},
		{"clear with for", adminCall{body: `{"action":"clear","circuit":"billing-api","for":"1m"}`}, http.StatusBadRequest, `"open" and "close"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.closed(t, "billing-api", 0)
			srv, logs := adminServer(t, f)
			resp, body := tt.call.send(t, srv)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			p := problemOf(t, resp, body)
			if p.Type != "about:blank" || p.Title != http.StatusText(tt.status) || !strings.Contains(p.Detail, tt.detail) {
				t.Errorf("problem %+v, want about:blank, %q, a detail with %q", p, http.StatusText(tt.status), tt.detail)
			}
			if tt.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != http.MethodPost {
				t.Errorf("Allow = %q", resp.Header.Get("Allow"))
			}
			if strings.Contains(string(body), "bearer token") {
				t.Errorf("the refusal shows the authorizer's error: %s", body)
			}
			if tt.detail == "not authorized" && !strings.Contains(logs.String(), "no valid bearer token from 127.0.0.1:") {
				t.Errorf("the logger heard %q, want the authorizer's error", logs)
			}
			if snap, err := f.b.Snapshot(context.Background(), "billing-api"); err != nil || snap.State != circuit.StateClosed || snap.Forced {
				t.Errorf("a refused request changed the circuit: %+v %v", snap, err)
			}
		})
	}
}
