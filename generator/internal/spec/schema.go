package spec

import (
	"errors"
	"fmt"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// level is where an option may be given.
type level uint8

const (
	// atDefaults is a manifest's defaults.
	atDefaults level = 1 << iota
	// atInterface is a guard directive or a manifest's interfaces entry.
	atInterface
	// atMethod is a circuit directive or a manifest's methods entry.
	atMethod
)

// String names a level in messages.
func (l level) String() string {
	switch l {
	case atDefaults:
		return "defaults"
	case atInterface:
		return "an interface"
	}
	return "a method"
}

// key is one option of the schema: the same word in directives and
// manifests, and the field of Options it decodes into.
type key struct {
	// Name is the option's word.
	Name string
	// Levels are where it may be given.
	Levels level
	// Value describes the value, for the README's table.
	Value string
	// Doc says what the option does, for the README and the init scaffold.
	Doc string
	// Default is, for an option that is not a policy field's, its value
	// when not given ("" for none).
	Default string
	// list marks an option whose value is a list: comma-separated in a
	// directive, a YAML sequence in a manifest; entry describes an entry.
	list  bool
	entry string
	// parse reads one value, or one entry of a list.
	parse func(s string) (any, error)
	// yamlTags are the YAML scalar tags a manifest value may have.
	yamlTags []string
	// slot is the field of Options the option decodes into.
	slot func(o *Options) slot
	// classifies marks the classification group.
	classifies bool
	// Field is the circuit.Policy field the option sets, or ""; apply
	// sets it from p.
	Field string
	apply func(dst *circuit.Policy, p *PolicyOptions)
}

// policyLevels are where a policy option may be given.
const policyLevels = atDefaults | atInterface | atMethod

// schema is every option, in the order the README lists them. The
// directive reader, the manifest reader, their messages, the init scaffold
// and the README's option table all come from it.
var schema = []*key{
	{Name: "wrapper", Levels: atInterface, Value: "a Go identifier", Doc: "the wrapper type's name (default Guarded + the interface's name; guarded + it for an unexported interface)",
		parse: parseText, yamlTags: str, slot: func(o *Options) slot { return &o.Wrapper }},
	{Name: "circuit", Levels: atInterface | atMethod, Value: "a circuit name", Doc: "the circuit of the methods that name none (a method directive gives its own first: //circuitgen:circuit NAME)",
		parse: parseCircuitName, yamlTags: str, slot: func(o *Options) slot { return &o.Circuit }},
	{Name: "skip", Levels: atInterface, list: true, entry: "a method name", Value: "method names", Doc: "methods that call straight through, unguarded, embedded ones included (a method directive says //circuitgen:skip, a manifest method skip: true)",
		parse: parseIdent, yamlTags: str, slot: func(o *Options) slot { return &o.Skip }},
	{Name: "guard_returned", Levels: atInterface | atMethod, Value: "true or false", Doc: "whether an interface a method returns comes back guarded, when this run guards that interface too",
		parse: parseBool, yamlTags: []string{"!!bool"}, slot: func(o *Options) slot { return &o.GuardReturned }, Default: "true"},
	{Name: "fallback", Levels: atInterface | atMethod, Value: "rejected, failed or never", Doc: "when the wrapper's fallback (With…Fallback) answers: rejected, on a *circuit.OpenError; failed, also on a counted Failure; never (a write)",
		parse: parseFallback, yamlTags: str, slot: func(o *Options) slot { return &o.Fallback }, Default: "rejected"},
	{Name: "threshold", Levels: policyLevels, Value: "1..1000, or 0 with rate", Doc: "consecutive failures that open the circuit (0: this rule off)",
		parse: parseInt, yamlTags: integer, slot: func(o *Options) slot { return &o.Policy.Threshold },
		Field: "FailureThreshold", apply: func(d *circuit.Policy, p *PolicyOptions) { d.FailureThreshold = p.Threshold.Val }},
	{Name: "rate", Levels: policyLevels, Value: "a rate such as 50% or 0.5", Doc: "opens the circuit when failures/calls over window reach it, once min_calls calls completed (Ignored calls never count)",
		parse: parseRate, yamlTags: []string{"!!str", "!!float", "!!int"}, slot: func(o *Options) slot { return &o.Policy.Rate },
		Field: "FailureRate", apply: func(d *circuit.Policy, p *PolicyOptions) { d.FailureRate = p.Rate.Val }},
	{Name: "min_calls", Levels: policyLevels, Value: "1..1000000", Doc: "calls that must complete within window before rate applies (used only with rate)",
		parse: parseInt, yamlTags: integer, slot: func(o *Options) slot { return &o.Policy.MinCalls },
		Field: "MinCalls", apply: func(d *circuit.Policy, p *PolicyOptions) { d.MinCalls = p.MinCalls.Val }},
	{Name: "window", Levels: policyLevels, Value: "a duration, 1s..1h", Doc: "the span rate and min_calls count over (used only with rate)",
		parse: parseDuration, yamlTags: str, slot: func(o *Options) slot { return &o.Policy.Window },
		Field: "Window", apply: func(d *circuit.Policy, p *PolicyOptions) { d.Window = p.Window.Val }},
	{Name: "window_calls", Levels: policyLevels, Value: "1..10000", Doc: "instead of window: the last this many completed calls are what rate and min_calls count over (used only with rate)",
		parse: parseInt, yamlTags: integer, slot: func(o *Options) slot { return &o.Policy.WindowCalls },
		Field: "WindowCalls", apply: func(d *circuit.Policy, p *PolicyOptions) { d.WindowCalls = p.WindowCalls.Val }},
	{Name: "slow", Levels: policyLevels, Value: "a duration", Doc: "a success slower than this counts as a failure",
		parse: parseDuration, yamlTags: str, slot: func(o *Options) slot { return &o.Policy.Slow },
		Field: "SlowCall", apply: func(d *circuit.Policy, p *PolicyOptions) { d.SlowCall = p.Slow.Val }},
	{Name: "cooldown", Levels: policyLevels, Value: "a duration, 1s..24h", Doc: "how long an open circuit rejects calls before it admits a probe",
		parse: parseDuration, yamlTags: str, slot: func(o *Options) slot { return &o.Policy.Cooldown },
		Field: "Cooldown", apply: func(d *circuit.Policy, p *PolicyOptions) { d.Cooldown = p.Cooldown.Val }},
	{Name: "max_cooldown", Levels: policyLevels, Value: "a duration, cooldown..24h", Doc: "each reopen from half-open doubles the cooldown up to this; closing resets it",
		parse: parseDuration, yamlTags: str, slot: func(o *Options) slot { return &o.Policy.MaxCooldown },
		Field: "MaxCooldown", apply: func(d *circuit.Policy, p *PolicyOptions) { d.MaxCooldown = p.MaxCooldown.Val }},
	{Name: "lease", Levels: policyLevels, Value: "a duration, 1s..1h", Doc: "how long a half-open probe holds its claim",
		parse: parseDuration, yamlTags: str, slot: func(o *Options) slot { return &o.Policy.Lease },
		Field: "ProbeLease", apply: func(d *circuit.Policy, p *PolicyOptions) { d.ProbeLease = p.Lease.Val }},
	{Name: "close_after", Levels: policyLevels, Value: "0..100", Doc: "probe successes in a row that close a half-open circuit (0 or 1: one)",
		parse: parseInt, yamlTags: integer, slot: func(o *Options) slot { return &o.Policy.CloseAfter },
		Field: "CloseAfter", apply: func(d *circuit.Policy, p *PolicyOptions) { d.CloseAfter = p.CloseAfter.Val }},
	{Name: "observe_only", Levels: policyLevels, Value: "true or false", Doc: "decide, record and report, but never reject: observers hear an observed rejection (a trial rollout)",
		parse: parseBool, yamlTags: []string{"!!bool"}, slot: func(o *Options) slot { return &o.Policy.ObserveOnly },
		Field: "ObserveOnly", apply: func(d *circuit.Policy, p *PolicyOptions) { d.ObserveOnly = p.ObserveOnly.Val }},
	{Name: "errors", Levels: atInterface | atMethod, list: true, entry: "an error type, variable or constant", Value: "error types, variables and constants", Doc: "errors that count as failures: types (*ConnectionError, *net/url.Error) matched with errors.As, variables (io.ErrUnexpectedEOF, context.DeadlineExceeded) and constants of an error type (kafka.LeaderNotAvailable) with errors.Is",
		parse: parseText, yamlTags: str, slot: func(o *Options) slot { return &o.Errors }, classifies: true},
	{Name: "statuses", Levels: atInterface | atMethod, list: true, entry: `a code such as 503 or a range such as "500-599"`, Value: "HTTP statuses and ranges (502-504,429)", Doc: "statuses that count as failures: an error's StatusCode() int or HTTPStatusCode() int (or an int field StatusCode, HTTPStatusCode or Code), or, with no error, an *http.Response's (or a result's StatusCode() int)",
		parse: parseStatusValue, yamlTags: []string{"!!int", "!!str"}, slot: func(o *Options) slot { return &o.Statuses }, classifies: true},
	{Name: "codes", Levels: atInterface | atMethod, list: true, entry: "a gRPC code name such as Unavailable", Value: "gRPC code names (Unavailable)", Doc: "gRPC status codes that count as failures, read from any error in the chain with GRPCStatus()",
		parse: parseCode, yamlTags: str, slot: func(o *Options) slot { return &o.Codes }, classifies: true},
	{Name: "classifier", Levels: atInterface | atMethod, Value: "a function (pkg.Func)", Doc: "a func(error) circuit.Outcome, or func(R, error) circuit.Outcome with R the method's first result, instead of errors, statuses and codes",
		parse: parseText, yamlTags: str, slot: func(o *Options) slot { return &o.Classifier }, classifies: true},
}

var (
	str     = []string{"!!str"}
	integer = []string{"!!int"}
)

// keyNamed returns the schema's key called name, or nil.
func keyNamed(name string) *key {
	i := slices.IndexFunc(schema, func(k *key) bool { return k.Name == name })
	if i < 0 {
		return nil
	}
	return schema[i]
}

// expects says what a manifest value of k must be.
func (k *key) expects() string {
	if slices.Equal(k.yamlTags, integer) {
		return "an integer"
	}
	return k.Value
}

// keysAt lists the names of the keys allowed at l, then extra, for a
// message: "a, b or c".
func keysAt(l level, extra ...string) string {
	var names []string
	for _, k := range schema {
		if k.Levels&l != 0 {
			names = append(names, k.Name)
		}
	}
	names = append(names, extra...)
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// parseText takes a value as written; the model checks it.
func parseText(s string) (any, error) { return s, nil }

// parseCircuitName reads a circuit name.
func parseCircuitName(s string) (any, error) {
	if err := circuit.ValidateName(s); err != nil {
		return nil, message(fmt.Sprintf("invalid circuit name %q: %s", s, reason(err)))
	}
	return s, nil
}

// Fallback modes: when a wrapper's fallback answers a method.
const (
	FallbackRejected = "rejected"
	FallbackFailed   = "failed"
	FallbackNever    = "never"
)

// parseFallback reads a fallback mode.
func parseFallback(s string) (any, error) {
	switch s {
	case FallbackRejected, FallbackFailed, FallbackNever:
		return s, nil
	}
	return nil, fmt.Errorf("%q is not rejected, failed or never", s)
}

// parseBool reads true or false.
func parseBool(s string) (any, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return nil, fmt.Errorf("%q is not true or false", s)
}

// parseIdent reads a method name.
func parseIdent(s string) (any, error) {
	if !token.IsIdentifier(s) {
		return nil, fmt.Errorf("%q is not a method name", s)
	}
	return s, nil
}

// parseInt reads an integer.
func parseInt(s string) (any, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an integer", s)
	}
	return n, nil
}

// parseDuration reads a duration such as 30s or 1m30s.
func parseDuration(s string) (any, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a duration such as 30s or 1m30s", s)
	}
	return d, nil
}

// parseRate reads a rate such as 50% or 0.5.
func parseRate(s string) (any, error) {
	num, pct := strings.CutSuffix(s, "%")
	if strings.ContainsAny(num, "eExXpP_") {
		return nil, fmt.Errorf("%q is not a rate such as 50%% or 0.5", s)
	}
	if pct {
		// 33.3e-2 is the float nearest 0.333, which 33.3/100 is not.
		num += "e-2"
	}
	r, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return nil, fmt.Errorf("%q is not a rate such as 50%% or 0.5", s)
	}
	return r, nil
}

// parseStatusValue reads a status code such as 503 or a range such as
// 500-599.
func parseStatusValue(s string) (any, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	if !isRange {
		hi = lo
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%q is not a code such as 503 or a range such as 500-599", s)
	}
	if a < 100 || a > 599 || b < 100 || b > 599 {
		return nil, fmt.Errorf("%q is outside 100-599", s)
	}
	if a > b {
		return nil, fmt.Errorf("%q is an empty range", s)
	}
	return StatusRange{Lo: a, Hi: b}, nil
}

// grpcCodes are the names of google.golang.org/grpc/codes, which codes=
// selects from.
var grpcCodes = []string{
	"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
	"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
	"Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss",
	"Unauthenticated",
}

// parseCode reads a gRPC code's name. OK is the code of no error: no error
// carries it.
func parseCode(s string) (any, error) {
	if s == "OK" {
		return nil, fmt.Errorf("%q is the code of a call that succeeded: it never counts as a failure", s)
	}
	if !slices.Contains(grpcCodes, s) {
		return nil, fmt.Errorf("%q is not a gRPC code name such as Unavailable (google.golang.org/grpc/codes)", s)
	}
	return s, nil
}

// reason returns a ConfigError's reason, or the error's text.
func reason(err error) string {
	var ce *circuit.ConfigError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}
