package lost

import (
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func rec(inc string, v uint64) *driver.Record {
	return &driver.Record{Name: "billing-api", Incarnation: inc, Version: v}
}

// TestOlder checks which reads find a rolled-back record: only one that
// began after a later revision of the same incarnation was seen.
func TestOlder(t *testing.T) {
	l := NewLast()
	early := l.Clock()
	time.Sleep(time.Millisecond)
	l.Saw(rec("a", 5))
	late := l.Clock() + 1
	tests := []struct {
		name  string
		rec   *driver.Record
		begin int64
		want  bool
	}{
		{"Same", rec("a", 5), late, false},
		{"Newer", rec("a", 6), late, false},
		{"Older", rec("a", 4), late, true},
		{"OlderReadInFlight", rec("a", 4), early, false},
		{"OtherIncarnation", rec("b", 1), late, false},
		{"Absent", nil, late, false},
	}
	for _, tt := range tests {
		if got := l.Older(tt.rec, tt.begin); got != tt.want {
			t.Errorf("%s: Older = %v, want %v", tt.name, got, tt.want)
		}
	}
	l.Saw(rec("a", 3)) // an older revision seen later changes nothing
	if !l.Older(rec("a", 4), l.Clock()+1) {
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
