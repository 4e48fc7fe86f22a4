package redisstore

import (
	"strings"
	"testing"
)

// format2Open is an open record as the previous release wrote it.
const format2Open = "2 0123456789abcdef0123456789abcdef 8 851fda4d060fd750a2f7e5c63637f186 billing-api open 3 3 2030-01-02T03:04:35Z  " +
	" 2030-01-02T03:04:05Z"

// TestRecordFormats reads format 2 (the previous release's) and writes
// format 3 exactly when a field only it holds (the policy state) needs it.
func TestRecordFormats(t *testing.T) {
	rec, err := decode(format2Open)
	if err != nil {
		t.Fatalf("decode(format 2) = %v", err)
	}
	if rec.Failures != 3 || rec.Forced || rec.Reopens != 0 || rec.Successes != 0 {
		t.Fatalf("decoded %+v", rec)
	}
	if enc, err := encode(rec, "851fda4d060fd750a2f7e5c63637f186"); err != nil || enc != format2Open {
		t.Fatalf("re-encoded as %q (%v), want format 2 unchanged", enc, err)
	}
	if p := revisionPrefix(rec); !strings.HasPrefix(format2Open, p) {
		t.Errorf("revisionPrefix = %q, not a prefix of the stored value", p)
	}

	forced := *rec
	forced.Forced, forced.Reopens = true, 2
	enc, err := encode(&forced, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "3 ") || !strings.HasSuffix(enc, " 0 2 1") {
		t.Errorf("encode = %q, want format 3 ending in successes 0, reopens 2, forced 1", enc)
	}
	if p := revisionPrefix(&forced); !strings.HasPrefix(enc, p) {
		t.Errorf("revisionPrefix = %q, not a prefix of %q", p, enc)
	}
	got, err := decode(enc)
	if err != nil || *got != forced {
		t.Errorf("decode(encode) = %+v, %v; want %+v", got, err, forced)
	}

	for name, v := range map[string]string{
		"format 2 with format-3 fields":     strings.Replace(enc, "3 ", "2 ", 1),
		"format 3 without them":             "3" + format2Open[1:] + " 0 0 0",
		"format 3 missing a field":          strings.TrimSuffix(enc, " 1"),
		"format 3 with forced 2":            strings.TrimSuffix(enc, "1") + "2",
		"format 3 with a leading zero":      strings.Replace(enc, " 0 2 1", " 0 02 1", 1),
		"format 3 reopens out of range":     strings.Replace(enc, " 0 2 1", " 0 33 1", 1),
		"format 3 successes on an open one": strings.Replace(enc, " 0 2 1", " 1 2 1", 1),
	} {
		if r, err := decode(v); err == nil {
			t.Errorf("%s: decode(%q) = %+v, want an error", name, v, r)
		}
	}
}
