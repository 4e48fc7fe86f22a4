package generator

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"time"
)

// opt is an option value with the position it was given at.
type opt[T any] struct {
	Val T
	Pos token.Position
	Set bool
	// Bad marks a list with entries that were reported as invalid.
	Bad bool
}

// entry is one errors= name with its position.
type entry struct {
	Name string
	Pos  token.Position
}

// options are the settings a guard, a circuit directive or a manifest entry
// may give. Unset options fall back to the enclosing level.
type options struct {
	Circuit   opt[string]
	Threshold opt[int]
	Cooldown  opt[time.Duration]
	Lease     opt[time.Duration]
	Errors    opt[[]entry]
	Statuses  opt[[]StatusRange]
}

// over returns o with every unset option taken from base.
func (o options) over(base options) options {
	if !o.Circuit.Set {
		o.Circuit = base.Circuit
	}
	if !o.Threshold.Set {
		o.Threshold = base.Threshold
	}
	if !o.Cooldown.Set {
		o.Cooldown = base.Cooldown
	}
	if !o.Lease.Set {
		o.Lease = base.Lease
	}
	if !o.Errors.Set {
		o.Errors = base.Errors
	}
	if !o.Statuses.Set {
		o.Statuses = base.Statuses
	}
	return o
}

// ifaceSpec is one interface to guard, as a directive or a manifest gave it.
type ifaceSpec struct {
	// Pos is the guard directive or the manifest's source entry.
	Pos token.Position
	// PkgPath is the interface's package; "" is the target package.
	PkgPath, Name string
	Wrapper       opt[string]
	Opts          options
	Methods       map[string]*methodSpec
	// File is the file declaring the interface, when it was parsed.
	File *ast.File
	// Target is the directory of the package the wrapper goes into.
	Target string
	// Manifest marks an interface listed in a manifest.
	Manifest bool
}

// methodSpec is what a directive or a manifest says about one method.
type methodSpec struct {
	Pos  token.Position
	Skip opt[bool]
	Opts options
	used bool
}

// parseThreshold parses a failure threshold.
func parseThreshold(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("threshold %q is not an integer", s)
	}
	return n, nil
}

// parseDuration parses a cooldown or lease such as 30s or 1m30s.
func parseDuration(key, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a duration such as 30s or 1m30s", key, s)
	}
	return d, nil
}

// parseStatus parses a status code such as 503 or a range such as 500-599.
func parseStatus(s string) (StatusRange, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	if !isRange {
		hi = lo
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil {
		return StatusRange{}, fmt.Errorf("status %q is not a code such as 503 or a range such as 500-599", s)
	}
	if a < 100 || a > 599 || b < 100 || b > 599 {
		return StatusRange{}, fmt.Errorf("status %q is outside 100-599", s)
	}
	if a > b {
		return StatusRange{}, fmt.Errorf("status range %q is empty", s)
	}
	return StatusRange{Lo: a, Hi: b}, nil
}
