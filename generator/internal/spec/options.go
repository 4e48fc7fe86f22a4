package spec

import (
	"errors"
	"go/token"
	"slices"
	"time"

	"github.com/circuitgen/circuitgen/generator/internal/diag"
	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// Value is a scalar option's value and where it was given.
type Value[T comparable] struct {
	Val T
	Pos token.Position
	// Set marks a value given at this level.
	Set bool
	// Bad marks a value already reported as invalid where it was given.
	Bad bool
}

// Entry is one entry of a list option.
type Entry[T comparable] struct {
	Val  T
	Text string
	Pos  token.Position
}

// List is a list option's entries and where the list was given.
type List[T comparable] struct {
	Entries []Entry[T]
	Pos     token.Position
	Set     bool
	// Bad marks a list with entries that were reported as invalid.
	Bad bool
}

// Options are what one level (a manifest's defaults, an interface, a
// method) gives. An option it does not set falls back to the enclosing
// level (Over).
type Options struct {
	Wrapper Value[string]
	Circuit Value[string]
	Skip    List[string]
	// GuardReturned says whether a returned interface the run guards
	// comes back guarded.
	GuardReturned Value[bool]
	// Fallback says when the wrapper's fallback answers: rejected,
	// failed or never.
	Fallback Value[string]
	Policy   PolicyOptions
	// Errors, Statuses, Codes and Classifier say what counts as a
	// failure. They are one group: a level that gives any of them
	// replaces all those of the enclosing level.
	Errors     List[string]
	Statuses   List[StatusRange]
	Codes      List[string]
	Classifier Value[string]
}

// PolicyOptions are the options that set circuit.Policy fields.
type PolicyOptions struct {
	Threshold   Value[int]
	Rate        Value[float64]
	MinCalls    Value[int]
	Window      Value[time.Duration]
	WindowCalls Value[int]
	Slow        Value[time.Duration]
	Cooldown    Value[time.Duration]
	MaxCooldown Value[time.Duration]
	Lease       Value[time.Duration]
	CloseAfter  Value[int]
	ObserveOnly Value[bool]
}

// StatusRange is an inclusive range of HTTP status codes.
type StatusRange struct {
	Lo, Hi int
}

// Classifies reports whether o gives any option of the classification
// group.
func (o *Options) Classifies() bool {
	return o.Errors.Set || o.Statuses.Set || o.Codes.Set || o.Classifier.Set
}

// Over returns o with every option it does not set taken from base, the
// classification group as one.
func (o Options) Over(base Options) Options {
	own := o.Classifies()
	for _, k := range schema {
		if own && k.classifies {
			continue
		}
		if s := k.slot(&o); !s.given() {
			s.inherit(k.slot(&base))
		}
	}
	return o
}

// Apply returns base with the fields p sets.
func (p *PolicyOptions) Apply(base circuit.Policy) circuit.Policy {
	o := Options{Policy: *p}
	for _, k := range schema {
		if k.apply != nil && k.slot(&o).given() {
			k.apply(&base, p)
		}
	}
	return base
}

// Field returns the key that sets the circuit.Policy field named field,
// where o gives it, and whether o gives it and it was reported already.
func (o *Options) Field(field string) (name string, pos token.Position, given, bad bool) {
	i := slices.IndexFunc(schema, func(k *key) bool { return k.Field == field })
	if i < 0 {
		return field, token.Position{}, false, false
	}
	k := schema[i]
	s := k.slot(o)
	return k.Name, s.position(), s.given(), s.isBad()
}

// slot is one option of Options, as the schema reads and merges it.
type slot interface {
	given() bool
	position() token.Position
	isBad() bool
	markBad()
	// setText parses a scalar's text; addEntry one entry of a list.
	setText(k *key, text string, pos token.Position, errs *diag.Collector)
	begin(pos token.Position)
	addEntry(k *key, text string, pos token.Position, errs *diag.Collector) bool
	inherit(base slot)
}

func (v *Value[T]) given() bool              { return v.Set }
func (v *Value[T]) position() token.Position { return v.Pos }
func (v *Value[T]) isBad() bool              { return v.Bad }
func (v *Value[T]) markBad()                 { v.Bad = true }
func (v *Value[T]) inherit(base slot)        { *v = *base.(*Value[T]) }
func (v *Value[T]) begin(token.Position)     {}

func (v *Value[T]) setText(k *key, text string, pos token.Position, errs *diag.Collector) {
	x, err := k.parse(text)
	if err != nil {
		// Still given: the enclosing level's value must not stand in.
		*v = Value[T]{Pos: pos, Set: true, Bad: true}
		report(errs, pos, k, "", err)
		return
	}
	*v = Value[T]{Val: x.(T), Pos: pos, Set: true}
}

func (v *Value[T]) addEntry(*key, string, token.Position, *diag.Collector) bool {
	panic("spec: addEntry on a scalar option")
}

func (l *List[T]) given() bool              { return l.Set }
func (l *List[T]) position() token.Position { return l.Pos }
func (l *List[T]) isBad() bool              { return l.Bad }
func (l *List[T]) markBad()                 { l.Bad = true }
func (l *List[T]) inherit(base slot)        { *l = *base.(*List[T]) }
func (l *List[T]) begin(pos token.Position) { *l = List[T]{Pos: pos, Set: true} }

func (l *List[T]) setText(*key, string, token.Position, *diag.Collector) {
	panic("spec: setText on a list option")
}

// addEntry parses one entry and appends it, unless an entry of the same
// value (503 and 503-503) is there already: a status given twice would
// render as code == 503 || code == 503, which go vet reports.
func (l *List[T]) addEntry(k *key, text string, pos token.Position, errs *diag.Collector) bool {
	if text == "" {
		errs.Add(pos, "empty entry in %s", k.Name)
		return false
	}
	x, err := k.parse(text)
	if err != nil {
		report(errs, pos, k, " entry", err)
		return false
	}
	v := x.(T)
	if !slices.ContainsFunc(l.Entries, func(e Entry[T]) bool { return e.Val == v }) {
		l.Entries = append(l.Entries, Entry[T]{Val: v, Text: text, Pos: pos})
	}
	return true
}

// message is an error of a parse function that is a whole message.
type message string

func (m message) Error() string { return string(m) }

// report records the parse error err of key k (an entry of it when what
// says so) at pos.
func report(errs *diag.Collector, pos token.Position, k *key, what string, err error) {
	if m, ok := err.(message); ok {
		errs.Add(pos, "%s", m)
		return
	}
	errs.Add(pos, "%s%s %v", k.Name, what, err)
}

// checkLevel reports what is wrong with the options of one level on their
// own, as soon as they are read: classifier= beside errors=, statuses= or
// codes=, and policy values bad whatever the other levels give
// (cooldown=48h), so that they are reported even where every method
// overrides them. It marks those values Bad, so that the methods using them
// do not report them again. A value bad only beside others (threshold=0
// without rate=, max_cooldown below cooldown) is left to the model, which
// checks each method's whole policy: a policy may be split between levels.
func checkLevel(o *Options, errs *diag.Collector) {
	if o.Classifier.Set && (o.Errors.Set || o.Statuses.Set || o.Codes.Set) {
		errs.Add(o.Classifier.Pos, "classifier= is exclusive with errors=, statuses= and codes=: give one or the other")
	}
	for _, k := range schema {
		s := k.slot(o)
		if k.apply == nil || !s.given() || s.isBad() {
			continue
		}
		if ce := badAlone(k, o); ce != nil {
			errs.Add(s.position(), "invalid %s %s: %s", k.Name, ce.Value, ce.Reason)
			s.markBad()
		}
	}
}

// badAlone returns the error circuit.Policy.Validate gives the policy
// option k of o, when it gives one in every policy the other levels could
// complete it to: the defaults with the rate rule off and on, and for a
// duration the cooldown equal to it (the lowest bound max_cooldown may
// have). It returns nil otherwise.
func badAlone(k *key, o *Options) *circuit.ConfigError {
	var alone Options
	k.slot(&alone).inherit(k.slot(o))
	withRate := circuit.DefaultPolicy
	withRate.FailureRate, withRate.MinCalls, withRate.Window = 1, 1, time.Minute
	contexts := []circuit.Policy{circuit.DefaultPolicy, withRate}
	if d, ok := durationOf(&alone.Policy); ok {
		for _, p := range contexts[:2] {
			p.Cooldown = d
			contexts = append(contexts, p)
		}
	}
	var first *circuit.ConfigError
	for _, p := range contexts {
		ce := FieldError(Validate(alone.Policy.Apply(p)), k.Field)
		if ce == nil {
			return nil
		}
		if first == nil {
			first = ce
		}
	}
	return first
}

// durationOf returns the one duration p sets, if any.
func durationOf(p *PolicyOptions) (time.Duration, bool) {
	for _, v := range []*Value[time.Duration]{&p.Window, &p.Slow, &p.Cooldown, &p.MaxCooldown, &p.Lease} {
		if v.Set {
			return v.Val, true
		}
	}
	return 0, false
}

// Validate is p.Validate, except that a threshold of 0 without a rate is
// an error: in a directive or manifest it means to turn the consecutive
// rule off, which needs the rate rule, not the runtime's default
// threshold.
func Validate(p circuit.Policy) error {
	err := p.Validate()
	if p.FailureThreshold == 0 && p.FailureRate == 0 {
		err = errors.Join(&circuit.ConfigError{Field: "FailureThreshold", Value: "0", Reason: "must be within 1..1000"}, err)
	}
	return err
}

// FieldError returns the *circuit.ConfigError err holds for the
// circuit.Policy field named field, or nil.
func FieldError(err error, field string) *circuit.ConfigError {
	for _, e := range Unjoin(err) {
		var ce *circuit.ConfigError
		if errors.As(e, &ce) && ce.Field == field {
			return ce
		}
	}
	return nil
}

// Unjoin returns the errors err joins, err itself if it joins none, or
// none for nil.
func Unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
