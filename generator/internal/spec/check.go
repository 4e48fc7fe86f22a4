package spec

import (
	"errors"
	"time"

	"github.com/circuitgen/circuitgen/generator/internal/diag"
	"github.com/circuitgen/circuitgen/runtime/circuit"
)

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
		ce := FieldError(alone.Policy.Apply(p).Validate(), k.Field)
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
