package redisstore

import (
	"fmt"
	"strconv"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// formatVersion is the record format this package reads and writes, kept in
// the hash's "v" field.
const formatVersion = "1"

// fields are the hash fields of a record, besides the write id "w".
var fields = []string{"v", "name", "state", "failures", "generation", "incarnation", "version",
	"open_until", "probe_token", "lease_until", "updated_at"}

// encode returns r as hash field/value pairs, every field present; a zero
// time or an empty token is an empty string.
func encode(r *circuit.Record) []any {
	return []any{
		"v", formatVersion,
		"name", r.Name,
		"state", r.State.String(),
		"failures", strconv.Itoa(r.Failures),
		"generation", strconv.FormatUint(r.Generation, 10),
		"incarnation", r.Incarnation,
		"version", strconv.FormatUint(r.Version, 10),
		"open_until", formatTime(r.OpenUntil),
		"probe_token", r.ProbeToken,
		"lease_until", formatTime(r.LeaseUntil),
		"updated_at", formatTime(r.UpdatedAt),
	}
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// decode parses a hash strictly: exactly the known fields, canonical values,
// a consistent record. The error describes what is wrong; callers wrap it
// with circuit.ErrCorrupt.
func decode(h map[string]string) (*circuit.Record, error) {
	if _, ok := h["w"]; !ok {
		return nil, fmt.Errorf("write id field is missing")
	}
	for _, f := range fields {
		if _, ok := h[f]; !ok {
			return nil, fmt.Errorf("field %q is missing", f)
		}
	}
	if len(h) != len(fields)+1 {
		return nil, fmt.Errorf("unknown fields (%d fields)", len(h))
	}
	if h["v"] != formatVersion {
		return nil, fmt.Errorf("unknown format version %q", h["v"])
	}
	state, err := circuit.ParseState(h["state"])
	if err != nil {
		return nil, err
	}
	failures, err := parseUint(h, "failures")
	if err != nil {
		return nil, err
	}
	r := &circuit.Record{Name: h["name"], State: state, Failures: int(min(failures, 1<<31)),
		Incarnation: h["incarnation"], ProbeToken: h["probe_token"]}
	if r.Generation, err = parseUint(h, "generation"); err != nil {
		return nil, err
	}
	if r.Version, err = parseUint(h, "version"); err != nil {
		return nil, err
	}
	for _, t := range []struct {
		field string
		dst   *time.Time
	}{{"open_until", &r.OpenUntil}, {"lease_until", &r.LeaseUntil}, {"updated_at", &r.UpdatedAt}} {
		if *t.dst, err = parseTime(h, t.field); err != nil {
			return nil, err
		}
	}
	if err := r.Check(); err != nil {
		return nil, err
	}
	return r, nil
}

// parseUint parses a canonical decimal: no sign, no leading zeros.
func parseUint(h map[string]string, field string) (uint64, error) {
	n, err := strconv.ParseUint(h[field], 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != h[field] {
		return 0, fmt.Errorf("field %q: %q is not a canonical unsigned integer", field, h[field])
	}
	return n, nil
}

// parseTime parses a UTC RFC 3339 time as formatTime writes it; "" is zero.
func parseTime(h map[string]string, field string) (time.Time, error) {
	s := h[field]
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || formatTime(t) != s {
		return time.Time{}, fmt.Errorf("field %q: %q is not a canonical UTC time", field, s)
	}
	return t.UTC(), nil
}
