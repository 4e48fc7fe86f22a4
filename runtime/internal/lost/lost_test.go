package lost

import (
	"errors"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func rec(inc string, v uint64) *driver.Record {
	return recAt(inc, v, 0)
}

// at0 is the update time of the records of rec; recAt's are s seconds from
// it.
var at0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func recAt(inc string, v uint64, s int) *driver.Record {
	return &driver.Record{Name: "billing-api", Incarnation: inc, Version: v, UpdatedAt: at0.Add(time.Duration(s) * time.Second)}
}

// TestOlder checks which reads find a rolled-back record: one that returns
// a lower version of the incarnation seen before it began, and no other.
func TestOlder(t *testing.T) {
	var l Last
	early := l.Begin() // a read in flight before anything was seen
	l.Saw(rec("a", 5))
	late := l.Begin()
	l.Saw(rec("b", 1)) // another incarnation seen while the late read is in flight
	tests := []struct {
		name string
		rec  *driver.Record
		seen Seen
		want bool
	}{
		{"Same", rec("a", 5), late, false},
		{"Newer", rec("a", 6), late, false},
		{"Older", rec("a", 4), late, true},
		{"OlderReadInFlight", rec("a", 4), early, false},
		{"OtherIncarnation", rec("c", 1), late, false},
		{"OtherIncarnationLater", recAt("c", 1, 1), late, false},
		{"OtherIncarnationEarlier", recAt("c", 7, -1), late, true},
		{"OtherIncarnationEarlierReadInFlight", recAt("c", 7, -1), early, false},
		{"Absent", nil, late, false},
	}
	for _, tt := range tests {
		if got := Older(tt.rec, tt.seen); got != tt.want {
			t.Errorf("%s: Older = %v, want %v", tt.name, got, tt.want)
		}
	}
	l.Saw(rec("b", 0)) // an older revision seen later changes nothing
	if !Older(rec("b", 0), l.Begin()) {
		t.Error("an older revision seen later replaced the latest")
	}
	// A record of another incarnation the store took replaces the latest,
	// though written earlier (a server clock stepped back): reads are then
	// judged against it, and it passes for older once, not for good.
	l.Saw(recAt("d", 1, -1))
	if Older(recAt("d", 2, -1), l.Begin()) {
		t.Error("a later version of an incarnation written earlier passes for older")
	}
}

// TestUnknown checks the record of an unknown circuit: consistent, open,
// its cooldown over.
func TestUnknown(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	r := Unknown("billing-api", now, "0123456789abcdef0123456789abcdef")
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	if r.State != driver.StateOpen || !r.OpenUntil.Equal(now) {
		t.Fatalf("record %+v, want open until now", r)
	}
}

// TestMakeUnknown checks what MakeUnknown returns for each reply of the
// store: its own Unknown written, another process's record, and a record
// lost again (gone, or rolled back) each time, which is never returned as
// no record.
func TestMakeUnknown(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	other := rec("other", 1)
	tests := []struct {
		name    string
		writes  []error          // replace's replies, in turn
		reads   []*driver.Record // read's records, in turn (nil: gone)
		want    string           // "unknown", "other" or "lost again"
		written int
	}{
		{"Written", []error{nil}, nil, "unknown", 1},
		{"AnotherWroteFirst", []error{driver.ErrConflict}, []*driver.Record{other}, "other", 1},
		{"LostAgainThenWritten", []error{driver.ErrConflict, nil}, []*driver.Record{nil}, "unknown", 2},
		{"LostAgainEachTime", []error{driver.ErrConflict, driver.ErrConflict, driver.ErrConflict}, []*driver.Record{nil, nil, nil}, "lost again", 3},
		{"RolledBackAgain", []error{driver.ErrConflict, nil}, []*driver.Record{rec("a", 1)}, "unknown", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var last Last
			last.Saw(rec("a", 5))
			writes, reads := 0, 0
			got, _, err := MakeUnknown("billing-api", now, nil, &last, func() string { return "fresh" },
				func(prev, next *driver.Record) error {
					writes++
					if next.State != driver.StateOpen {
						t.Errorf("write %d: %+v, want an unknown (open) record", writes, next)
					}
					return tt.writes[writes-1]
				},
				func() (*driver.Record, time.Time, bool, error) {
					r := tt.reads[reads]
					reads++
					if r != nil {
						r.State = driver.StateClosed
					}
					return r, now, r == nil, nil
				})
			var what string
			switch {
			case errors.Is(err, ErrLostAgain):
				what = "lost again"
			case err != nil:
				t.Fatal(err)
			case got == other:
				what = "other"
			case got != nil && got.Incarnation == "fresh":
				what = "unknown"
			default:
				t.Fatalf("returned %+v", got)
			}
			if what != tt.want || writes != tt.written {
				t.Errorf("got %s after %d writes, want %s after %d", what, writes, tt.want, tt.written)
			}
		})
	}
}
