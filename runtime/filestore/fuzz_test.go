package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// fuzzSeeds are records as the store writes them, in each state, and some
// near misses; testdata/fuzz/FuzzDecode holds more.
var fuzzSeeds = []string{
	`{"v":1,"name":"billing-api","state":"closed","failures":2,"generation":3,"incarnation":"0123456789abcdef0123456789abcdef","version":7,"updated_at":"2030-01-02T03:04:05Z"}` + "\n",
	`{"v":1,"name":"billing-api","state":"open","failures":3,"generation":3,"incarnation":"0123456789abcdef0123456789abcdef","version":8,"open_until":"2030-01-02T03:04:35Z","updated_at":"2030-01-02T03:04:05Z"}` + "\n",
	`{"v":1,"name":"billing-api","state":"half_open","failures":3,"generation":3,"incarnation":"0123456789abcdef0123456789abcdef","version":9,"open_until":"2030-01-02T03:04:35Z","probe_token":"fedcba9876543210fedcba9876543210","lease_until":"2030-01-02T03:04:45.123456789Z","updated_at":"2030-01-02T03:04:35Z"}` + "\n",
	`{"v":1,"name":"billing-api","state":"closed","failures":2,"failures":2,"generation":3,"incarnation":"0123456789abcdef0123456789abcdef","version":7,"updated_at":"2030-01-02T03:04:05Z"}`,
	`{"v":2,"name":"billing-api","state":"open","failures":3,"generation":3,"incarnation":"0123456789abcdef0123456789abcdef","version":8,"open_until":"2030-01-02T03:04:35Z","updated_at":"2030-01-02T03:04:05Z","reopens":2,"forced":true}` + "\n",
	`{"v":2,"name":"billing-api","state":"half_open","failures":3,"generation":3,"incarnation":"0123456789abcdef0123456789abcdef","version":9,"open_until":"2030-01-02T03:04:35Z","updated_at":"2030-01-02T03:04:35Z","successes":2}` + "\n",
	`{"v":1,"name":"billing-api","state":"open","failures":3,"generation":3,"incarnation":"0123456789abcdef0123456789abcdef","version":8,"open_until":"2030-01-02T03:04:35Z","updated_at":"2030-01-02T03:04:05Z","forced":true}` + "\n",
	`{"v":2}`,
	`{"v":1,"name":"billing-api","sta`,
	"",
	"null",
	"\xef\xbb\xbf{}",
}

// FuzzDecode checks the strict record decoder: it never panics; whatever it
// refuses reaches callers through the store as an error wrapping
// driver.ErrCorrupt; and what it accepts is a consistent record whose
// encoding decodes to the same record and encodes to the same bytes, the
// compacted input (a record has one spelling).
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	path := filepath.Join(dir, circuit.Key("billing-api")+".json")
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := decode(data)

		// Through the store's reader, the same verdict.
		if werr := os.WriteFile(path, data, 0o600); werr != nil {
			t.Fatal(werr)
		}
		srec, serr := readRecord(path)
		switch {
		case err != nil && !errors.Is(serr, driver.ErrCorrupt):
			t.Fatalf("decode refused %q (%v), the store reports %v, want an error wrapping ErrCorrupt", data, err, serr)
		case err == nil && rec.Name == "billing-api" && (serr != nil || srec == nil):
			t.Fatalf("decode accepted %q, the store reports %v", data, serr)
		case err == nil && rec.Name != "billing-api" && !errors.Is(serr, driver.ErrCorrupt):
			t.Fatalf("a record of circuit %q under billing-api's key: the store reports %v, want ErrCorrupt", rec.Name, serr)
		}
		if err != nil {
			if rec != nil {
				t.Fatalf("decode returned a record with error %v", err)
			}
			return
		}

		if cerr := rec.Check(); cerr != nil {
			t.Fatalf("decode accepted an inconsistent record %+v: %v", rec, cerr)
		}
		enc, err := encode(rec)
		if err != nil {
			t.Fatalf("encode(%+v): %v", rec, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatalf("decode accepted %q, which does not compact: %v", data, err)
		}
		if !bytes.Equal(append(compact.Bytes(), '\n'), enc) {
			t.Fatalf("decode accepted a non-canonical spelling:\n%s\ncanonical:\n%s", data, enc)
		}
		rec2, err := decode(enc)
		if err != nil {
			t.Fatalf("decode(encode(decode(%q))): %v", data, err)
		}
		if *rec2 != *rec && !sameRecord(rec, rec2) {
			t.Fatalf("decode→encode→decode changed the record:\n%+v\n%+v", rec, rec2)
		}
		enc2, err := encode(rec2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encode is not stable: %q, %q (%v)", enc, enc2, err)
		}
	})
}

// sameRecord compares records field by field, times as instants.
func sameRecord(a, b *driver.Record) bool {
	return a.Name == b.Name && a.State == b.State && a.Failures == b.Failures && a.Generation == b.Generation &&
		a.Incarnation == b.Incarnation && a.Version == b.Version && a.OpenUntil.Equal(b.OpenUntil) &&
		a.ProbeToken == b.ProbeToken && a.LeaseUntil.Equal(b.LeaseUntil) && a.UpdatedAt.Equal(b.UpdatedAt) &&
		a.Successes == b.Successes && a.Reopens == b.Reopens && a.Forced == b.Forced
}
