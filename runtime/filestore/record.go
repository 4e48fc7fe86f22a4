package filestore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// The record formats this package reads and writes. Format 2 adds the fields
// successes, reopens and forced; a record whose new fields are all zero is
// written in format 1, so that it keeps one spelling and a process of an
// earlier release can still read it.
const (
	formatVersion1 = 1
	formatVersion  = 2
)

// fileRecord is a record's JSON form. Field order is the canonical order.
type fileRecord struct {
	V           int       `json:"v"`
	Name        string    `json:"name"`
	State       string    `json:"state"`
	Failures    int       `json:"failures"`
	Generation  uint64    `json:"generation"`
	Incarnation string    `json:"incarnation"`
	Version     uint64    `json:"version"`
	OpenUntil   time.Time `json:"open_until,omitzero"`
	ProbeToken  string    `json:"probe_token,omitempty"`
	LeaseUntil  time.Time `json:"lease_until,omitzero"`
	UpdatedAt   time.Time `json:"updated_at"`
	Successes   int       `json:"successes,omitempty"`
	Reopens     int       `json:"reopens,omitempty"`
	Forced      bool      `json:"forced,omitempty"`
}

// encode returns r's canonical JSON form, with a trailing newline.
func encode(r *driver.Record) ([]byte, error) {
	v := formatVersion1
	if r.Successes != 0 || r.Reopens != 0 || r.Forced {
		v = formatVersion
	}
	b, err := json.Marshal(fileRecord{
		V: v, Name: r.Name, State: r.State.String(), Failures: r.Failures,
		Generation: r.Generation, Incarnation: r.Incarnation, Version: r.Version,
		OpenUntil: r.OpenUntil.UTC(), ProbeToken: r.ProbeToken, LeaseUntil: r.LeaseUntil.UTC(),
		UpdatedAt: r.UpdatedAt.UTC(), Successes: r.Successes, Reopens: r.Reopens, Forced: r.Forced,
	})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// decode parses data strictly. The error describes what is wrong; callers
// wrap it with driver.ErrCorrupt.
func decode(data []byte) (*driver.Record, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f fileRecord
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the record")
	}
	if f.V != formatVersion1 && f.V != formatVersion {
		return nil, fmt.Errorf("unknown format version %d", f.V)
	}
	state, err := driver.ParseState(f.State)
	if err != nil {
		return nil, err
	}
	if f.Incarnation == driver.FirstIncarnation {
		f.Incarnation = driver.FirstIncarnation // most records': one string, not one per record read
	}
	r := &driver.Record{
		Name: f.Name, State: state, Failures: f.Failures, Generation: f.Generation,
		Incarnation: f.Incarnation, Version: f.Version, OpenUntil: f.OpenUntil,
		ProbeToken: f.ProbeToken, LeaseUntil: f.LeaseUntil, UpdatedAt: f.UpdatedAt,
		Successes: f.Successes, Reopens: f.Reopens, Forced: f.Forced,
	}
	if err := r.Check(); err != nil {
		return nil, err
	}
	// encoding/json accepts duplicate keys, keys in another case and
	// non-canonical spellings; a record we wrote re-encodes to itself. So
	// format 1 with a format-2 field, or format 2 without one, is refused.
	canon, err := encode(r)
	if err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return nil, err
	}
	compact.WriteByte('\n')
	if !bytes.Equal(compact.Bytes(), canon) {
		return nil, fmt.Errorf("not in canonical form (duplicate, misspelt or reformatted fields)")
	}
	return r, nil
}
