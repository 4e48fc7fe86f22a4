package circuit

import (
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

// Policy is what a circuit does with classified outcomes: how many
// consecutive failures open it, how long it stays open, and how long a
// half-open probe may hold its claim before another caller may take over.
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

// Validate reports whether every field of p is within its bounds.
// The error is a *ConfigError.
func (p Policy) Validate() error {
	switch {
	case p.FailureThreshold < MinFailureThreshold || p.FailureThreshold > MaxFailureThreshold:
		return &ConfigError{Field: "FailureThreshold", Value: fmt.Sprint(p.FailureThreshold), Reason: "must be within 1..1000"}
	case p.Cooldown < MinCooldown || p.Cooldown > MaxCooldown:
		return &ConfigError{Field: "Cooldown", Value: p.Cooldown.String(), Reason: "must be within 1s..24h"}
	case p.ProbeLease < MinProbeLease || p.ProbeLease > MaxProbeLease:
		return &ConfigError{Field: "ProbeLease", Value: p.ProbeLease.String(), Reason: "must be within 1s..1h"}
	}
	return nil
}
