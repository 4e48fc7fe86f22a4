package httpguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// TypeCircuitUnknown identifies an AdminHandler request that names a circuit
// the store has no record of: one never called, a typo, or one cleared
// since.
const TypeCircuitUnknown = "https://pkg.go.dev/github.com/circuitgen/circuitgen/runtime/httpguard#TypeCircuitUnknown"

// Admin actions, the Action of an AdminRequest.
const (
	// ActionOpen holds a circuit open (circuit.Breaker.ForceOpen) for the
	// request's For.
	ActionOpen = "open"
	// ActionClose holds a circuit closed (circuit.Breaker.ForceClosed) for
	// the request's For: every call is admitted and no outcome counts.
	ActionClose = "close"
	// ActionClear removes a circuit's record, even a corrupt one
	// (circuit.Breaker.Clear): it starts afresh, closed, and a hold ends.
	ActionClear = "clear"
)

// adminBodyLimit bounds the body of an admin request.
const adminBodyLimit = 4 << 10

// AdminRequest is the JSON body of a request to AdminHandler.
type AdminRequest struct {
	// Action is ActionOpen, ActionClose or ActionClear.
	Action string `json:"action"`
	// Circuit is the circuit's name.
	Circuit string `json:"circuit"`
	// For is how long ActionOpen or ActionClose holds the circuit, 1s..24h,
	// in Go's duration syntax ("90s", "1h30m"); it is required for them and
	// not allowed for ActionClear.
	For string `json:"for,omitempty"`
	// New lets ActionOpen or ActionClose act on a circuit the store has no
	// record of and the handler's Breaker does not call (creating one,
	// held); without it such a name is refused, so that a typo does not
	// hold a circuit nothing calls.
	New bool `json:"new,omitempty"`
}

// AdminResponse is AdminHandler's answer to an action that succeeded.
type AdminResponse struct {
	// Action is the action done.
	Action string `json:"action"`
	// Circuit is the circuit's status read after the action.
	Circuit circuit.Snapshot `json:"circuit"`
}

// AdminHandler returns an http.Handler through which operators change
// circuits' state: hold one open or closed, or clear one. Mount it on an admin mux,
// beside StatusHandlerFunc.
//
// authorize decides, for every request, whether it may change circuits:
// it checks the caller's credentials (a bearer token, basic auth, a client
// certificate, the identity a proxy vouches for) and returns an error to
// refuse. There is no default: AdminHandler panics when authorize is nil.
//
// The handler answers POST only (405 otherwise), with a JSON AdminRequest
// as the body and Content-Type application/json (415 otherwise). Browsers
// cannot send such a request across origins without a CORS preflight,
// which the handler never grants, and a cross-origin request that reaches
// it is refused (403, http.CrossOriginProtection): a page an operator visits
// cannot change circuits through the operator's browser. A request authorize
// refuses is answered 403, its error logged, not shown. A request that
// names a circuit the store has no record of, and that b does not run
// calls through (Breaker.Names: a healthy circuit writes no record), is
// refused with 404 and TypeCircuitUnknown unless it holds it with New set; a hold refuses a
// corrupt record with 409 (clear it first). A malformed request is
// answered 400. Every refusal is an RFC 9457 problem document (Problem):
// these have type TypeCircuitUnknown, TypeCircuitUnavailable (503, the
// store failed) or "about:blank". An action done is answered 200 with an
// AdminResponse, and logged, with the caller's address, at Warn for a hold
// and Info for ActionClear.
//
// The logger is WithLogger's, slog.Default() without one; the other
// options do not apply.
func AdminHandler(b *circuit.Breaker, authorize func(*http.Request) error, opts ...Option) http.Handler {
	if authorize == nil {
		panic("httpguard: AdminHandler without an authorizer would let anyone who reaches it change circuits: pass a func that checks the request's credentials")
	}
	return &adminHandler{b: b, authorize: authorize, logger: newOptions(opts).logger, origins: http.NewCrossOriginProtection()}
}

type adminHandler struct {
	b         *circuit.Breaker
	authorize func(*http.Request) error
	logger    *slog.Logger
	origins   *http.CrossOriginProtection
}

// ServeHTTP checks the request, then does its action.
func (h *adminHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(w, http.StatusMethodNotAllowed, "Circuits are changed with POST.")
		return
	}
	if err := h.origins.Check(r); err != nil {
		refuse(w, http.StatusForbidden, "Cross-origin requests may not change circuits.")
		return
	}
	if err := h.authorize(r); err != nil {
		h.logger.LogAttrs(r.Context(), slog.LevelWarn, "circuit admin: request not authorized",
			slog.String("remote", r.RemoteAddr), slog.String("error", err.Error()))
		refuse(w, http.StatusForbidden, "The request is not authorized to change circuits.")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		refuse(w, http.StatusUnsupportedMediaType, "Send the request as application/json.")
		return
	}
	req, d, refused := readAdminRequest(w, r)
	if refused != "" {
		refuse(w, http.StatusBadRequest, refused)
		return
	}
	h.do(w, r, req, d)
}

// readAdminRequest decodes and checks r's body, returning the request and,
// for a hold, its duration; or, when it is not acceptable, why, in a
// sentence for the caller.
func readAdminRequest(w http.ResponseWriter, r *http.Request) (req AdminRequest, d time.Duration, refused string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, adminBodyLimit))
	if err != nil {
		return req, 0, fmt.Sprintf("The body could not be read (at most %d bytes).", adminBodyLimit)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		return req, 0, `The body is not one JSON object with "action", "circuit" and, to hold, "for" and "new".`
	}
	if err := circuit.ValidateName(req.Circuit); err != nil {
		return req, 0, fmt.Sprintf("The circuit name is not valid: %v.", err)
	}
	switch req.Action {
	case ActionOpen, ActionClose:
		d, err := time.ParseDuration(req.For)
		if err != nil || d < minHold || d > maxHold {
			return req, 0, fmt.Sprintf(`"for" must be a duration within %v..%v, such as "90s" or "1h".`, minHold, maxHold)
		}
		return req, d, ""
	case ActionClear:
		if req.For != "" || req.New {
			return req, 0, `"for" and "new" apply to "open" and "close" only.`
		}
		return req, 0, ""
	}
	return req, 0, fmt.Sprintf(`The action must be %q, %q or %q.`, ActionOpen, ActionClose, ActionClear)
}

// The bounds of a hold, as circuit.Breaker.ForceOpen and ForceClosed take it.
const (
	minHold = time.Second
	maxHold = 24 * time.Hour
)

// do does the checked request's action and answers with the circuit's
// status after it.
func (h *adminHandler) do(w http.ResponseWriter, r *http.Request, req AdminRequest, d time.Duration) {
	ctx, name := r.Context(), req.Circuit
	snap, err := h.b.Snapshot(ctx, name)
	se, _ := errors.AsType[*circuit.StateError](err)
	switch {
	case se != nil && se.Corrupt() && req.Action != ActionClear:
		writeProblem(w, 0, Problem{Type: "about:blank", Title: http.StatusText(http.StatusConflict), Status: http.StatusConflict,
			Detail: fmt.Sprintf("The record of %s is corrupt: clear it first.", name), Circuit: name})
		return
	case se != nil && se.Corrupt(): // clearing removes it
	case err != nil:
		h.failed(w, r, name, err)
		return
	case !snap.Exists && !slices.Contains(h.b.Names(), name) && (req.Action == ActionClear || !req.New):
		// No record, and not a circuit this process calls: most likely a
		// typo. (A healthy circuit writes no record.)
		detail := fmt.Sprintf("The store has no record of %s, and this process does not call it: it has not failed since its first call anywhere, or the name is wrong.", name)
		if req.Action != ActionClear {
			detail += ` To hold it all the same, send "new": true.`
		}
		writeProblem(w, 0, Problem{Type: TypeCircuitUnknown, Title: "Circuit never seen", Status: http.StatusNotFound, Detail: detail, Circuit: name})
		return
	}
	level, msg := slog.LevelInfo, "circuit cleared by an admin request"
	attrs := []slog.Attr{slog.String("circuit", name), slog.String("remote", r.RemoteAddr)}
	switch req.Action {
	case ActionOpen:
		err = h.b.ForceOpen(ctx, name, d)
		level, msg = slog.LevelWarn, "circuit forced open by an admin request"
		attrs = append(attrs, slog.Duration("for", d), slog.Bool("new", !snap.Exists))
	case ActionClose:
		err = h.b.ForceClosed(ctx, name, d)
		level, msg = slog.LevelWarn, "circuit forced closed by an admin request"
		attrs = append(attrs, slog.Duration("for", d), slog.Bool("new", !snap.Exists))
	default:
		err = h.b.Clear(ctx, name)
	}
	if err != nil {
		h.failed(w, r, name, err)
		return
	}
	h.logger.LogAttrs(ctx, level, msg, attrs...)
	st, _ := h.b.Snapshot(ctx, name) // an error is in st.Error
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	_ = json.NewEncoder(w).Encode(AdminResponse{Action: req.Action, Circuit: st})
}

// failed answers an action the store could not do with 503, logging err.
func (h *adminHandler) failed(w http.ResponseWriter, r *http.Request, name string, err error) {
	h.logger.LogAttrs(r.Context(), slog.LevelError, "circuit admin: the store failed",
		slog.String("circuit", name), slog.String("error", err.Error()))
	p := Problem{Type: TypeCircuitUnavailable, Title: "Circuit state unavailable", Status: http.StatusServiceUnavailable,
		Detail: fmt.Sprintf("The state of %s could not be read or changed; nothing was done.", name), Circuit: name}
	writeProblem(w, 0, p)
}

// refuse answers a request that is not acted on with an about:blank
// problem of the given status.
func refuse(w http.ResponseWriter, status int, detail string) {
	writeProblem(w, 0, Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail})
}
