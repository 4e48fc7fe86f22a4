package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// A record is stored as one string value: numFields fields in a fixed order,
// each separated by one space (sep), none of which may contain a space:
//
//	2 <incarnation> <version> <write id> <name> <state> <failures> <generation> <open_until> <probe_token> <lease_until> <updated_at>
//
// Format 3 adds the fields successes, reopens and forced at the end (forced
// is 1 or 0), and is written only for a record that has one of them set, so
// that a record keeps one spelling and a process of an earlier release can
// still read every other record:
//
//	3 <the eleven fields of format 2> <successes> <reopens> <forced>
//
// The format version comes first and the revision (incarnation, version)
// right after it, so that replaceScript compares a revision with one prefix
// comparison. Integers are canonical decimals (no sign, no leading zeros);
// times are UTC RFC 3339 with nanoseconds as time.RFC3339Nano writes them;
// a zero time or an absent probe token is an empty field. For example:
//
//	2 d0230f7fbdae3eac630d6c4ea69245f6 1 851fda4d060fd750a2f7e5c63637f186 billing-api closed 0 1    2026-11-30T09:50:23.267875Z
const (
	// formatVersion is the record format this package reads and writes.
	// (Format 1 was a hash of the same fields; a hash is now corrupt.)
	formatVersion  = "2"
	formatVersion3 = "3"
	sep            = ' '
	numFields      = 12
	numFields3     = numFields + 3
)

// format returns the format r is written in.
func format(r *driver.Record) string {
	if r.Successes != 0 || r.Reopens != 0 || r.Forced {
		return formatVersion3
	}
	return formatVersion
}

// revisionPrefix returns the start of the stored value of a record whose
// revision is r's: format version, incarnation and version, each followed
// by the separator.
func revisionPrefix(r *driver.Record) string {
	return string(appendRevision(make([]byte, 0, len(formatVersion)+len(r.Incarnation)+24), r))
}

// appendRevision appends r's revision prefix (revisionPrefix) to b.
func appendRevision(b []byte, r *driver.Record) []byte {
	b = append(b, format(r)...)
	b = append(b, sep)
	b = append(b, r.Incarnation...)
	b = append(b, sep)
	b = strconv.AppendUint(b, r.Version, 10)
	return append(b, sep)
}

// encode returns r's stored value, marked with the write id. r must pass
// Check; the write id must not be empty; neither it nor r's probe token may
// contain the separator.
func encode(r *driver.Record, writeID string) (string, error) {
	if err := r.Check(); err != nil {
		return "", fmt.Errorf("refusing to write an inconsistent record: %w", err)
	}
	if writeID == "" || strings.IndexByte(writeID, sep) >= 0 || strings.IndexByte(r.ProbeToken, sep) >= 0 {
		return "", fmt.Errorf("the write id must not be empty, and neither it nor the probe token may contain a space")
	}
	b := appendRevision(make([]byte, 0, 256), r)
	b = append(b, writeID...)
	b = append(b, sep)
	b = append(b, r.Name...)
	b = append(b, sep)
	b = append(b, r.State.String()...)
	b = append(b, sep)
	b = strconv.AppendUint(b, uint64(r.Failures), 10)
	b = append(b, sep)
	b = strconv.AppendUint(b, r.Generation, 10)
	b = append(b, sep)
	b = appendTime(b, r.OpenUntil)
	b = append(b, sep)
	b = append(b, r.ProbeToken...)
	b = append(b, sep)
	b = appendTime(b, r.LeaseUntil)
	b = append(b, sep)
	b = appendTime(b, r.UpdatedAt)
	if format(r) == formatVersion3 {
		b = append(b, sep)
		b = strconv.AppendUint(b, uint64(r.Successes), 10)
		b = append(b, sep)
		b = strconv.AppendUint(b, uint64(r.Reopens), 10)
		b = append(b, sep)
		b = append(b, "01"[boolInt(r.Forced)])
	}
	return string(b), nil
}

// appendTime appends t in UTC RFC 3339 with nanoseconds; nothing for a zero
// time.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	return t.UTC().AppendFormat(b, time.RFC3339Nano)
}

// decode parses a stored value strictly: exactly numFields fields, the
// known format version, a write id, canonical values, a consistent record.
// The record's strings share v's memory. The error describes what is wrong;
// callers wrap it with driver.ErrCorrupt.
func decode(v string) (*driver.Record, error) {
	var f [numFields3]string
	n := numFields
	if strings.HasPrefix(v, formatVersion3+string(sep)) {
		n = numFields3
	}
	rest := v
	for i := range n - 1 {
		var ok bool
		if f[i], rest, ok = strings.Cut(rest, string(sep)); !ok {
			return nil, fmt.Errorf("%d fields, want %d", i+1, n)
		}
	}
	if strings.IndexByte(rest, sep) >= 0 {
		return nil, fmt.Errorf("more than %d fields", n)
	}
	f[n-1] = rest
	if f[0] != formatVersion && f[0] != formatVersion3 {
		return nil, fmt.Errorf("unknown format version %q", f[0])
	}
	if f[3] == "" {
		return nil, fmt.Errorf("the write id is missing")
	}
	state, err := driver.ParseState(f[5])
	if err != nil {
		return nil, err
	}
	r := &driver.Record{Incarnation: f[1], Name: f[4], State: state, ProbeToken: f[9]}
	if r.Version, err = parseUint("version", f[2]); err != nil {
		return nil, err
	}
	failures, err := parseUint("failures", f[6])
	if err != nil {
		return nil, err
	}
	r.Failures = int(min(failures, 1<<31)) // Check rejects it beyond the largest threshold
	if r.Generation, err = parseUint("generation", f[7]); err != nil {
		return nil, err
	}
	if r.OpenUntil, err = parseTime("open_until", f[8]); err != nil {
		return nil, err
	}
	if r.LeaseUntil, err = parseTime("lease_until", f[10]); err != nil {
		return nil, err
	}
	if r.UpdatedAt, err = parseTime("updated_at", f[11]); err != nil {
		return nil, err
	}
	if n == numFields3 {
		successes, err := parseUint("successes", f[12])
		if err != nil {
			return nil, err
		}
		reopens, err := parseUint("reopens", f[13])
		if err != nil {
			return nil, err
		}
		if f[14] != "0" && f[14] != "1" {
			return nil, fmt.Errorf("forced: %q is not 0 or 1", f[14])
		}
		r.Successes = int(min(successes, 1<<31)) // Check bounds both
		r.Reopens = int(min(reopens, 1<<31))
		r.Forced = f[14] == "1"
		if format(r) != formatVersion3 {
			return nil, fmt.Errorf("format 3 with no field of format 3 set: not canonical")
		}
	}
	if err := r.Check(); err != nil {
		return nil, err
	}
	return r, nil
}

// parseUint parses a canonical decimal: digits only, no leading zeros.
func parseUint(field, s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || s[0] == '0' && len(s) > 1 {
		return 0, fmt.Errorf("%s: %q is not a canonical unsigned integer", field, s)
	}
	return n, nil
}

// parseTime parses a time as appendTime writes it; "" is the zero time.
func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	var buf [48]byte
	if err != nil || string(appendTime(buf[:0], t)) != s {
		return time.Time{}, fmt.Errorf("%s: %q is not a canonical UTC time", field, s)
	}
	return t.UTC(), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
