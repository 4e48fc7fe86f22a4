package httpguard

import (
	"context"
	"encoding/json"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// refreshSeconds is how often the HTML page reloads itself.
const refreshSeconds = 5

// StatusHandler returns an http.Handler that reports the named circuits'
// state, read with b.Snapshot (which never changes a circuit): the state by
// the store's clock, so a circuit whose cooldown is over shows as half-open,
// ready to probe, before any call arrives. Mount it on an admin mux, not on
// the public one.
//
// It answers GET and HEAD. The response is JSON (a StatusReport) when the
// query has format=json, or when the Accept header asks for
// application/json and not for HTML; otherwise it is a self-contained HTML
// page (no scripts, no external assets) that reloads itself every five
// seconds. A circuit whose record is corrupt or unreadable is reported with
// state "error" and does not fail the others; a named circuit the store has
// no record of is shown as never seen (in JSON, "recorded": false). Its
// list of names cannot fail, so it logs nothing; StatusHandlerFunc takes a
// logger.
func StatusHandler(b *circuit.Breaker, names ...string) http.Handler {
	names = slices.Clone(names)
	return &statusHandler{b: b, list: func(context.Context) ([]string, error) { return names, nil }, logger: newOptions(nil).logger}
}

// StatusHandlerFunc is like StatusHandler, but asks list for the circuit
// names on every request, so that a store's listing can be plugged in:
//
//	httpguard.StatusHandlerFunc(b, store.Names) // store is a *filestore.Store
//
// A store lists the circuits it has a record of, and a circuit has none
// until an outcome changes something: the page also shows the circuits b
// runs calls through (Breaker.Names), so that the healthy ones show, as
// closed.
//
// When some records cannot be read, list returns the other circuits' names
// and a joined error, one per bad record (errors.Join, as the stores' Names
// do): the page shows those circuits and lists the bad records in the
// report's Unreadable. When list fails otherwise, the response is 500 with
// the report's Error set and no circuits. Either way the causes are logged,
// not shown: to WithLogger's logger, slog.Default() without one. The other
// options do not apply to it.
func StatusHandlerFunc(b *circuit.Breaker, list func(context.Context) ([]string, error), opts ...Option) http.Handler {
	return &statusHandler{b: b, list: list, logger: newOptions(opts).logger, own: true}
}

type statusHandler struct {
	b      *circuit.Breaker
	list   func(context.Context) ([]string, error)
	logger *slog.Logger
	own    bool // the page lists b's own circuits too (StatusHandlerFunc)
}

// ServeHTTP serves the report as JSON or HTML.
func (h *statusHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	now := time.Now()
	status := http.StatusOK
	var rep StatusReport
	names, err := h.list(r.Context())
	bad, partial := recordErrors(err)
	if err != nil && !partial {
		h.logger.LogAttrs(r.Context(), slog.LevelError, "circuit status: cannot list circuits", slog.String("error", err.Error()))
		rep = StatusReport{GeneratedAt: now.UTC(), Circuits: []circuit.Snapshot{}, Error: "the circuits in the store could not be listed"}
		status = http.StatusInternalServerError
	} else {
		if h.own {
			names = append(names, h.b.Names()...)
		}
		rep = report(r.Context(), h.b, names, now)
		for _, e := range bad {
			h.logger.LogAttrs(r.Context(), slog.LevelError, "circuit status: a record cannot be read", slog.String("error", e.Error()))
			rep.Unreadable = append(rep.Unreadable, circuit.Unreadable(e))
		}
	}
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Add("Vary", "Accept")
	if wantsJSON(r) {
		hd.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
		return
	}
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = statusPage.Execute(w, newPage(rep, now, h.b.Names()))
}

// recordErrors splits the error of a listing into the errors of its bad
// records, one each: it reports false when err is not such a joined error
// (the listing failed as a whole).
func recordErrors(err error) ([]error, bool) {
	if err == nil {
		return nil, true
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil, false
	}
	return j.Unwrap(), true
}

// wantsJSON reports whether r asks for JSON: format=json in the query, or an
// Accept header that lists application/json but no HTML.
func wantsJSON(r *http.Request) bool {
	switch r.URL.Query().Get("format") {
	case "json":
		return true
	case "html":
		return false
	}
	json, html := false, false
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q <= 0 {
			continue
		}
		switch mt {
		case "application/json":
			json = true
		case "text/html", "application/xhtml+xml":
			html = true
		}
	}
	return json && !html
}
