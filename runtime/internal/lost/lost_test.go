package lost

import (
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func rec(inc string, v uint64) *driver.Record {
	return &driver.Record{Name: "billing-api", Incarnation: inc, Version: v}
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
