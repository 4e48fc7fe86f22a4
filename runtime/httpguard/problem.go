package httpguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// Problem type URIs, as the "type" member of the problem documents this
// package writes. Clients compare them as strings.
const (
	// TypeCircuitOpen identifies a request rejected because a circuit it
	// depends on is open, or half-open with a probe in flight.
	TypeCircuitOpen = "https://pkg.go.dev/github.com/circuitgen/circuitgen/runtime/httpguard#TypeCircuitOpen"
	// TypeCircuitUnavailable identifies a request refused, or left
	// unconfirmed, because a circuit's state could not be read or recorded.
	TypeCircuitUnavailable = "https://pkg.go.dev/github.com/circuitgen/circuitgen/runtime/httpguard#TypeCircuitUnavailable"
)

// ProblemContentType is the media type of an RFC 9457 problem document.
const ProblemContentType = "application/problem+json"

// Problem is the RFC 9457 problem document this package writes, with
// extension members. Clients may decode responses into it.
type Problem struct {
	// Type is TypeCircuitOpen or TypeCircuitUnavailable; for AdminHandler's
	// refusals also TypeCircuitUnknown, or "about:blank" when the status
	// says it all (the title is then the status's text).
	Type string `json:"type"`
	// Title is a short, fixed summary of the problem type.
	Title string `json:"title"`
	// Status is the HTTP status code: 503 for TypeCircuitOpen and
	// TypeCircuitUnavailable.
	Status int `json:"status"`
	// Detail explains this occurrence to a person.
	Detail string `json:"detail"`
	// Circuit is the name of the circuit involved: a fixed logical
	// dependency name, never a URL or a secret.
	Circuit string `json:"circuit,omitempty"`
	// OpenUntil is when the circuit may admit a call again, in RFC 3339
	// (UTC); set for TypeCircuitOpen only.
	OpenUntil time.Time `json:"open_until,omitzero"`
	// Forced reports that an operator holds the circuit open until
	// OpenUntil (circuit.Breaker.ForceOpen, circuitctl open), rather than
	// the dependency's failures; absent otherwise. TypeCircuitOpen only.
	Forced bool `json:"forced,omitempty"`
}

// WriteError writes the HTTP response for a circuit error and reports
// whether it did. Call it with the error of a guarded call before anything
// else is written to w.
//
// A *circuit.StateError anywhere in err's chain is answered first, since it
// takes precedence over the call's own error: 503 with a
// TypeCircuitUnavailable problem that names the circuit and says whether the
// request may have taken effect, but never the store's error, paths or keys.
// No Retry-After is sent, as a broken store does not heal on a schedule; log
// err yourself to see the cause.
//
// Otherwise a *circuit.OpenError anywhere in err's chain is answered with 503,
// Retry-After set to its RetryAfterSeconds (at least 1), and a TypeCircuitOpen problem
// with the circuit's name, open_until, and forced when an operator holds it
// open.
//
// Any other error, including nil and a *circuit.ConfigError (a programming
// error, not the dependency's), writes nothing and returns false: the caller
// answers it.
func WriteError(w http.ResponseWriter, r *http.Request, err error) bool {
	if se, ok := errors.AsType[*circuit.StateError](err); ok {
		writeProblem(w, 0, stateProblem(se))
		return true
	}
	if oe, ok := errors.AsType[*circuit.OpenError](err); ok {
		secs := retryAfter(oe) // once: the header and the detail agree
		writeProblem(w, secs, openProblem(oe, secs))
		return true
	}
	return false
}

func openProblem(oe *circuit.OpenError, secs int) Problem {
	retry := fmt.Sprintf("retry after %d %s", secs, plural(secs, "second"))
	detail := fmt.Sprintf("Calls to %s are suspended after repeated failures; %s.", oe.Name, retry)
	switch {
	case oe.State == circuit.StateHalfOpen:
		detail = fmt.Sprintf("%s is being probed for recovery; %s.", oe.Name, retry)
	case oe.Forced:
		detail = fmt.Sprintf("Calls to %s are held off by an operator; %s.", oe.Name, retry)
	}
	p := Problem{Type: TypeCircuitOpen, Title: "Circuit open", Status: http.StatusServiceUnavailable, Detail: detail,
		Circuit: oe.Name, Forced: oe.Forced}
	if !oe.Until.IsZero() {
		p.OpenUntil = oe.Until.UTC()
	}
	return p
}

func stateProblem(se *circuit.StateError) Problem {
	detail := fmt.Sprintf("The health of %s cannot be verified, so the request was not attempted.", se.Name)
	if se.Ran {
		detail = fmt.Sprintf("The request was attempted, but its outcome could not be recorded for %s; it may have taken effect, so check before retrying.", se.Name)
	}
	return Problem{Type: TypeCircuitUnavailable, Title: "Circuit state unavailable", Status: http.StatusServiceUnavailable, Detail: detail, Circuit: se.Name}
}

// writeProblem writes p, with Retry-After when retry is positive.
func writeProblem(w http.ResponseWriter, retry int, p Problem) {
	body, err := json.Marshal(p)
	if err != nil { // a Problem always encodes; keep the status regardless
		body = []byte(`{"status":503}`)
	}
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", ProblemContentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if retry > 0 {
		h.Set("Retry-After", strconv.Itoa(retry))
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(body, '\n'))
}

// retryAfter is oe's RetryAfterSeconds, at least 1 even for an OpenError
// made by hand, whose RetryAfterSeconds is 0.
func retryAfter(oe *circuit.OpenError) int { return max(1, oe.RetryAfterSeconds()) }

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
