package filestore

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// TestRecordFormats reads records written in format 1 (the fixtures in
// testdata/format1, as the previous release wrote them) and writes format 2
// exactly when a field only it holds (the policy state) needs it.
func TestRecordFormats(t *testing.T) {
	for _, name := range []string{"open", "half_open"} {
		t.Run("format 1 "+name, func(t *testing.T) {
			data, err := os.ReadFile("testdata/format1/" + name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			rec, err := decode(data)
			if err != nil {
				t.Fatalf("decode(format 1) = %v", err)
			}
			if rec.State.String() != name || rec.Failures != 3 || rec.Successes != 0 || rec.Reopens != 0 || rec.Forced {
				t.Errorf("decoded %+v", rec)
			}
			enc, err := encode(rec)
			if err != nil || string(enc) != string(data) {
				t.Errorf("a format-1 record re-encodes to %s (%v), want itself", enc, err)
			}
		})
	}
	open := &driver.Record{Name: "billing-api", State: circuit.StateOpen, Failures: 3, Generation: 3,
		Incarnation: "0123456789abcdef0123456789abcdef", Version: 8,
		OpenUntil: time.Date(2030, 1, 2, 3, 4, 35, 0, time.UTC), UpdatedAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	policyFields := []struct {
		name string
		edit func(*driver.Record)
		want string
	}{
		{"forced", func(r *driver.Record) { r.Forced = true }, `"forced":true`},
		{"reopens", func(r *driver.Record) { r.Reopens = 4 }, `"reopens":4`},
		{"successes", func(r *driver.Record) {
			r.State, r.Successes = circuit.StateHalfOpen, 2
		}, `"successes":2`},
	}
	for _, tt := range policyFields {
		t.Run("format 2 "+tt.name, func(t *testing.T) {
			rec := *open
			tt.edit(&rec)
			enc, err := encode(&rec)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(enc), `{"v":2,`) || !strings.Contains(string(enc), tt.want) {
				t.Errorf("encode = %s, want format 2 with %s", enc, tt.want)
			}
			got, err := decode(enc)
			if err != nil || !sameRecord(got, &rec) {
				t.Errorf("decode(encode) = %+v, %v; want %+v", got, err, rec)
			}
			v1 := strings.Replace(string(enc), `{"v":2,`, `{"v":1,`, 1)
			if _, err := decode([]byte(v1)); err == nil {
				t.Errorf("decode accepted a format-1 record with a format-2 field: %s", v1)
			}
		})
	}
	t.Run("format 2 without a field only it holds is not canonical", func(t *testing.T) {
		enc, _ := encode(open)
		v2 := strings.Replace(string(enc), `{"v":1,`, `{"v":2,`, 1)
		if _, err := decode([]byte(v2)); err == nil {
			t.Errorf("decode accepted %s", v2)
		}
	})
}
