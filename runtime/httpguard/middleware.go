package httpguard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// DefaultFailureStatuses are the response statuses Middleware counts as the
// circuit's failures unless WithFailureStatuses or WithClassifier says
// otherwise: the 5xx statuses that mean a dependency failed or timed out.
// 501 and 505 describe the request, not the dependency's health.
var DefaultFailureStatuses = []int{
	http.StatusInternalServerError,
	http.StatusBadGateway,
	http.StatusServiceUnavailable,
	http.StatusGatewayTimeout,
}

// Classifier decides the outcome of a request a guarded handler served.
// status is the final status the handler wrote; 200 when it wrote nothing,
// as net/http then sends; 0 when its client cancelled the request, whatever
// the handler wrote then (a ReverseProxy's 502), or when it wrote nothing
// and the request's context had ended (the server timed it out); and 101
// when it hijacked the connection.
type Classifier func(r *http.Request, status int) circuit.Outcome

// StatusClassifier returns the Classifier that counts the given statuses as
// failures, a status of 0 as ignored, and every other status as success: a
// 404 or 400 still shows that the dependency answered.
func StatusClassifier(failures ...int) Classifier {
	failures = slices.Clone(failures)
	return func(_ *http.Request, status int) circuit.Outcome {
		switch {
		case status == 0:
			return circuit.Ignored
		case slices.Contains(failures, status):
			return circuit.Failure
		}
		return circuit.Success
	}
}

// Option configures Middleware, StatusHandlerFunc or AdminHandler; each
// says which options apply to it and ignores the others.
type Option func(*options)

type options struct {
	classify Classifier
	logger   *slog.Logger
}

// newOptions applies opts over the defaults: DefaultFailureStatuses and
// slog.Default().
func newOptions(opts []Option) options {
	o := options{classify: StatusClassifier(DefaultFailureStatuses...)}
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	return o
}

// WithFailureStatuses makes Middleware count exactly the given response
// statuses as failures, in place of DefaultFailureStatuses.
func WithFailureStatuses(statuses ...int) Option {
	return func(o *options) { o.classify = StatusClassifier(statuses...) }
}

// WithClassifier makes Middleware classify each served request with c.
func WithClassifier(c Classifier) Option {
	return func(o *options) { o.classify = c }
}

// WithLogger sets where Middleware, StatusHandlerFunc and AdminHandler log
// what they hide from clients (the store's errors) and, for AdminHandler,
// the changes it makes; slog.Default() when not set.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// Middleware guards handlers that depend on the named circuit: every
// request is one call through b under policy p.
//
// While the circuit is open (or half-open with another request's probe in
// flight) a request is answered at once by WriteError, 503 with Retry-After,
// and the handler is not called. Otherwise the handler runs with a
// ResponseWriter that records its status, and the request settles the
// circuit: by default a status in DefaultFailureStatuses is a failure and any
// other a success, so enough consecutive 5xx responses open the circuit and
// the half-open probe is one real request. A handler that panics settles as
// ignored and the panic goes on. When the circuit's state cannot be read, the
// request is refused with 503 (fail closed) and the cause is logged, not
// shown; so is a request whose context ended before it was admitted. When
// the outcome cannot be recorded after the handler ran, the response
// already sent stands and the cause is logged.
//
// Do not guard the same circuit again inside the handler: the inner calls
// would count each failure twice. Middleware panics if name or p is invalid,
// as the name and policy of a route are fixed when the program starts.
func Middleware(b *circuit.Breaker, name string, p circuit.Policy, opts ...Option) func(http.Handler) http.Handler {
	if err := circuit.ValidateName(name); err != nil {
		panic("httpguard: " + err.Error())
	}
	if err := p.Validate(); err != nil {
		panic("httpguard: " + err.Error())
	}
	o := newOptions(opts)
	return func(next http.Handler) http.Handler {
		return &guard{b: b, name: name, policy: p, opts: o, next: next}
	}
}

// guard is the handler Middleware returns.
type guard struct {
	b      *circuit.Breaker
	name   string
	policy circuit.Policy
	opts   options
	next   http.Handler
}

// ServeHTTP admits the request through the circuit, serves it and settles.
func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t, err := g.b.Allow(r.Context(), g.name, g.policy)
	if err != nil {
		g.reject(w, r, err)
		return
	}
	rec := &recorder{ResponseWriter: w}
	settled := false
	defer func() {
		if !settled { // the handler panicked: settle, then let the panic go on
			g.logSettle(r, t.Done(circuit.Ignored))
		}
	}()
	g.next.ServeHTTP(rec, r)
	settled = true
	g.logSettle(r, t.Done(g.opts.classify(r, finalStatus(rec, r))))
}

// finalStatus is the status a Classifier is given for rec: 0 for a
// request its client cancelled, whatever the handler wrote then (a
// ReverseProxy's 502), or that ended with nothing written.
func finalStatus(rec *recorder, r *http.Request) int {
	switch err := r.Context().Err(); {
	case rec.hijacked:
		return http.StatusSwitchingProtocols
	case err == context.Canceled:
		return 0
	case rec.status != 0:
		return rec.status
	case err != nil:
		return 0
	}
	return http.StatusOK
}

func (g *guard) reject(w http.ResponseWriter, r *http.Request, err error) {
	if _, ok := errors.AsType[*circuit.StateError](err); ok && r.Context().Err() == nil {
		g.opts.logger.LogAttrs(r.Context(), slog.LevelError, "circuit state unavailable; request refused",
			slog.String("circuit", g.name), slog.String("error", err.Error()))
	}
	if !WriteError(w, r, err) { // the request's context ended before it was admitted
		writeProblem(w, 0, Problem{Type: "about:blank", Title: http.StatusText(http.StatusServiceUnavailable),
			Status: http.StatusServiceUnavailable, Detail: "The request ended before it was admitted.", Circuit: g.name})
	}
}

func (g *guard) logSettle(r *http.Request, err error) {
	if err != nil {
		g.opts.logger.LogAttrs(context.WithoutCancel(r.Context()), slog.LevelError, "circuit could not record a served request",
			slog.String("circuit", g.name), slog.String("error", err.Error()))
	}
}
