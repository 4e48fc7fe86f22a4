package httpguard_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/httpguard"
)

// population puts circuits of every kind into f's store, dated ten
// seconds ago, and returns their names: closed with 2 failures, open,
// half-open with a probe in flight, open with its cooldown over (ready to
// probe), forced open, corrupt, never seen.
func population(t *testing.T, f *fixture) []string {
	t.Helper()
	f.dated(10 * time.Second)
	f.closed(t, "billing-api", 2)
	f.open(t, "payment-gateway:refund")
	f.halfOpen(t, "email-svc")
	f.cooledDown(t, "inventory")
	if err := f.w.ForceOpen(context.Background(), "refunds", time.Hour); err != nil {
		t.Fatal(err)
	}
	f.corrupt(t, "ledger")
	return []string{"payment-gateway:refund", "billing-api", "email-svc", "inventory", "ledger", "refunds", "search", "billing-api"}
}

func fetchReport(t *testing.T, c *http.Client, req *http.Request) (*http.Response, httpguard.StatusReport) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep httpguard.StatusReport
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("decoding the report: %v", err)
	}
	return resp, rep
}

func TestStatusJSON(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(httpguard.StatusHandler(f.b, population(t, f)...))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"?format=json", nil)
	resp, rep := fetchReport(t, srv.Client(), req)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	type want struct {
		state           string
		probing         bool
		failures        int
		gen             uint64
		open, lease     bool
		recorded, error bool
		forced          bool
	}
	wants := map[string]want{
		"billing-api":            {state: "closed", failures: 2, gen: 1, recorded: true},
		"email-svc":              {state: "half_open", probing: true, failures: 1, gen: 1, open: true, lease: true, recorded: true},
		"inventory":              {state: "half_open", failures: 1, gen: 1, open: true, recorded: true},
		"ledger":                 {state: "error", error: true},
		"payment-gateway:refund": {state: "open", failures: 3, gen: 1, open: true, recorded: true},
		"refunds":                {state: "open", gen: 1, open: true, recorded: true, forced: true},
		"search":                 {state: "closed"},
	}
	var names []string
	for _, c := range rep.Circuits {
		names = append(names, c.Name)
		w := wants[c.Name]
		st := c.State.String()
		if c.Error != "" {
			st = "error" // the JSON form's state for an unreadable circuit
		}
		got := want{st, c.Probing, c.Failures, c.Generation, !c.OpenUntil.IsZero(), !c.LeaseUntil.IsZero(), c.Exists, c.Error != "", c.Forced}
		if got != w {
			t.Errorf("%s = %+v, want %+v", c.Name, got, w)
		}
		if c.Exists && (c.UpdatedAt.IsZero() || time.Since(c.UpdatedAt) > 3*time.Minute) {
			t.Errorf("%s updated_at = %v", c.Name, c.UpdatedAt)
		}
	}
	if got := strings.Join(names, " "); got != "billing-api email-svc inventory ledger payment-gateway:refund refunds search" {
		t.Errorf("circuits = %s, want each once, sorted", got)
	}
	if ledger := rep.Circuits[3]; ledger.Error != "corrupt record" {
		t.Errorf("ledger error = %q", ledger.Error)
	}
}

func TestStatusNegotiation(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(httpguard.StatusHandler(f.b, "a"))
	defer srv.Close()
	tests := []struct {
		query, accept, want string
	}{
		{"", "", "text/html; charset=utf-8"},
		{"", "*/*", "text/html; charset=utf-8"},
		{"", "application/json", "application/json"},
		{"", "application/json, text/plain;q=0.5", "application/json"},
		{"", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html; charset=utf-8"},
		{"", "application/json;q=0", "text/html; charset=utf-8"},
		{"?format=json", "text/html", "application/json"},
		{"?format=html", "application/json", "text/html; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.query+" "+tt.accept, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+tt.query, nil)
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("Content-Type"); got != tt.want {
				t.Errorf("Content-Type = %q, want %q", got, tt.want)
			}
			if resp.Header.Get("Vary") != "Accept" || resp.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("headers %v", resp.Header)
			}
		})
	}
	resp, err := srv.Client().Post(srv.URL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func TestStatusHandlerFunc(t *testing.T) {
	f := newFixture(t)
	f.open(t, "payment-gateway:refund")
	f.closed(t, "billing-api", 0)
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	srv := httptest.NewServer(httpguard.StatusHandlerFunc(f.b, f.store.Names, httpguard.WithLogger(logger)))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "application/json")
	_, rep := fetchReport(t, srv.Client(), req)
	if len(rep.Circuits) != 2 || rep.Circuits[0].Name != "billing-api" || rep.Circuits[1].State.String() != "open" {
		t.Errorf("report = %+v", rep.Circuits)
	}

	// A corrupt record fails only itself: the listing returns the good
	// circuits, and the page shows them and lists the bad record, hiding
	// the store's internals.
	f.corrupt(t, "ledger")
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"?format=json", nil)
	resp, rep := fetchReport(t, srv.Client(), req)
	if resp.StatusCode != http.StatusOK || rep.Error != "" || len(rep.Circuits) != 2 || rep.Circuits[1].State.String() != "open" {
		t.Errorf("one corrupt record: %d %+v", resp.StatusCode, rep)
	}
	if len(rep.Unreadable) != 1 || rep.Unreadable[0] != "corrupt record" {
		t.Errorf("unreadable = %q, want the corrupt record listed", rep.Unreadable)
	}
	resp, body := get(t, srv.Client(), srv.URL)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HTML, one corrupt record: %d", resp.StatusCode)
	}
	if strings.Contains(body, f.dir) || strings.Contains(body, circuit.Key("ledger")) {
		t.Errorf("the page leaks the store's internals:\n%s", body)
	}
	for _, want := range []string{`data-circuit="billing-api"`, `data-circuit="payment-gateway:refund"`, "2 circuits: 1 open, 1 closed; 1 record could not be read", "<li>corrupt record</li>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	// What the page hides goes to the handler's logger.
	if got := logs.String(); strings.Count(got, "a record cannot be read") != 2 || !strings.Contains(got, circuit.Key("ledger")) {
		t.Errorf("the handler's logger heard:\n%s\nwant the corrupt record, once a request", got)
	}

	// A listing that fails as a whole is a 500 that hides the cause, and
	// logs it.
	logs.Reset()
	failing := httpguard.StatusHandlerFunc(f.b, func(context.Context) ([]string, error) { return nil, errors.New("/secret/dir: boom") },
		httpguard.WithLogger(logger))
	for _, query := range []string{"?format=json", ""} {
		rec := httptest.NewRecorder()
		failing.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+query, nil))
		if strings.Contains(rec.Body.String(), "secret") || rec.Code != 500 || !strings.Contains(rec.Body.String(), "could not be listed") {
			t.Errorf("listing error %q: %d %s", query, rec.Code, rec.Body)
		}
	}
	if got := logs.String(); strings.Count(got, "/secret/dir: boom") != 2 {
		t.Errorf("the handler's logger heard:\n%s\nwant the listing's error, once a request", got)
	}
}

// TestStatusPageHeldClosed: a circuit an operator holds closed reads as
// such, and does not count among the circuits that are not closed.
func TestStatusPageHeldClosed(t *testing.T) {
	f := newFixture(t)
	if err := f.b.ForceClosed(context.Background(), "refunds", time.Hour); err != nil {
		t.Fatal(err)
	}
	f.closed(t, "billing-api", 0)
	srv := httptest.NewServer(httpguard.StatusHandler(f.b, "refunds", "billing-api"))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "?format=html")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	page := string(body)
	if m := sumRE.FindStringSubmatch(page); m == nil || visible(m[1]) != "2 circuits: 1 forced closed, 1 closed" {
		t.Errorf("summary = %q", m)
	}
	if !strings.Contains(page, "<title>Circuits</title>") {
		t.Error("the title counts the circuit held closed as not closed")
	}
	const want = "refunds Forced closed held closed by an operator: every call runs, no failure counts; circuitctl clear ends it 0 "
	found := false
	for _, r := range rowRE.FindAllStringSubmatch(page, -1) {
		if r[1] == "refunds" {
			found = true
			if text := visible(r[2]); !strings.Contains(text, want) || !strings.Contains(r[0], `class="state-held"`) {
				t.Errorf("row refunds reads %q (%s); want %q, class state-held", text, r[0][:min(len(r[0]), 80)], want)
			}
		}
	}
	if !found {
		t.Error("no row for refunds")
	}
}

// TestStatusPageShowsHealthyCircuits: a circuit the page's Breaker runs
// calls through that never failed has no record, so the store does not
// list it; StatusHandlerFunc's page shows it all the same, as closed, and
// its JSON says it has no record. A name only snapshotted (never called)
// is not added.
func TestStatusPageShowsHealthyCircuits(t *testing.T) {
	f := newFixture(t)
	f.open(t, "payment-gateway:refund")
	if err := f.b.Run(context.Background(), "email-svc", policy, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := f.b.Snapshot(context.Background(), "typo-svc"); err != nil {
		t.Fatal(err)
	}
	if names, err := f.store.Names(context.Background()); err != nil || slices.Contains(names, "email-svc") {
		t.Fatalf("the store lists %q (%v): want no record of the healthy circuit", names, err)
	}
	srv := httptest.NewServer(httpguard.StatusHandlerFunc(f.b, f.store.Names))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"?format=json", nil)
	_, rep := fetchReport(t, srv.Client(), req)
	if len(rep.Circuits) != 2 || rep.Circuits[0].Name != "email-svc" || rep.Circuits[0].State.String() != "closed" || rep.Circuits[0].Exists {
		t.Fatalf("report = %+v, want email-svc closed with no record, and the open circuit", rep.Circuits)
	}
	_, body := get(t, srv.Client(), srv.URL+"?format=html")
	if m := sumRE.FindStringSubmatch(body); m == nil || visible(m[1]) != "2 circuits: 1 open, 1 closed" {
		t.Errorf("summary = %q, want the healthy circuit counted as closed", m)
	}
	if !strings.Contains(body, `data-circuit="email-svc"`) || strings.Contains(body, "typo-svc") {
		t.Errorf("the page shows the healthy circuit %t, the snapshotted name %t; want true, false",
			strings.Contains(body, `data-circuit="email-svc"`), strings.Contains(body, "typo-svc"))
	}
}
