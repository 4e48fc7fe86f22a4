package circuit

import (
	"errors"
	"fmt"
	"time"
)

// Bounds of a Policy.
const (
	MinFailureThreshold = 1
	MaxFailureThreshold = 1000
	MinCooldown         = time.Second
	MaxCooldown         = 24 * time.Hour
	MinProbeLease       = time.Second
	MaxProbeLease       = time.Hour
)

// DefaultPolicy is the policy of a circuit whose directive, manifest or
// caller sets nothing: five consecutive failures open it for thirty seconds,
// and a half-open probe holds its claim for ten. It is the one place the
// defaults live; the generator, its templates and the README read them here.
var DefaultPolicy = Policy{
	FailureThreshold: 5,
	Cooldown:         30 * time.Second,
	ProbeLease:       10 * time.Second,
}

// Policy is what a circuit does with classified outcomes: how many
// consecutive failures open it, how long it stays open, and how long a
// half-open probe may hold its claim before another caller may take over.
// The zero Policy is invalid; start from DefaultPolicy.
type Policy struct {
	// FailureThreshold is the number of consecutive failures, 1..1000, that
	// opens a closed circuit.
	FailureThreshold int
	// Cooldown, 1s..24h, is how long an open circuit rejects calls before
	// it admits one half-open probe.
	Cooldown time.Duration
	// ProbeLease, 1s..1h, bounds a half-open probe's claim: when a probe
	// neither succeeds nor fails within it (it crashed, or hangs), the next
	// caller claims a new probe.
	ProbeLease time.Duration
}

// Validate reports every field of p that is out of its bounds, as one
// *ConfigError per field joined with errors.Join (errors.As finds the
// first). It returns nil when p is valid.
func (p Policy) Validate() error {
	var errs []error
	if p.FailureThreshold < MinFailureThreshold || p.FailureThreshold > MaxFailureThreshold {
		errs = append(errs, &ConfigError{Field: "FailureThreshold", Value: fmt.Sprint(p.FailureThreshold), Reason: "must be within 1..1000"})
	}
	if p.Cooldown < MinCooldown || p.Cooldown > MaxCooldown {
		errs = append(errs, &ConfigError{Field: "Cooldown", Value: p.Cooldown.String(), Reason: "must be within 1s..24h"})
	}
	if p.ProbeLease < MinProbeLease || p.ProbeLease > MaxProbeLease {
		errs = append(errs, &ConfigError{Field: "ProbeLease", Value: p.ProbeLease.String(), Reason: "must be within 1s..1h"})
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}
