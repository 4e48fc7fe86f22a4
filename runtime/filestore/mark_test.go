package filestore

import (
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// TestMarkBehind: a record read from a file is behind a slot's mark when it
// is of the mark's incarnation and older than the record the mark names,
// within the mark's 11 bits of version, or of another incarnation (put back
// from before a Clear); a record ahead of the mark, of its incarnation (an
// index older than the files), or read against no mark or a Clear's, is
// not.
func TestMarkBehind(t *testing.T) {
	rec := func(inc string, v uint64) *driver.Record { return &driver.Record{Incarnation: inc, Version: v} }
	const a, b = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	if markOf(rec(a, 1))&^markVersion == markOf(rec(b, 1))&^markVersion {
		t.Fatal("the two incarnations' digests collide: pick others")
	}
	for _, tt := range []struct {
		name string
		file *driver.Record
		mark uint64
		want bool
	}{
		{"same", rec(a, 7), markOf(rec(a, 7)), false},
		{"one behind", rec(a, 6), markOf(rec(a, 7)), true},
		{"far behind", rec(a, 1), markOf(rec(a, 1000)), true},
		{"behind across a wrap", rec(a, 2047), markOf(rec(a, 2049)), true},
		{"ahead", rec(a, 9), markOf(rec(a, 7)), false},
		{"ahead across a wrap", rec(a, 2049), markOf(rec(a, 2047)), false},
		{"another incarnation", rec(b, 1), markOf(rec(a, 7)), true},
		{"another incarnation ahead", rec(b, 9), markOf(rec(a, 7)), true},
		{"no mark", rec(a, 1), markNone, false},
		{"cleared", rec(a, 1), markCleared, false},
		{"no record", nil, markOf(rec(a, 7)), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := behind(tt.file, tt.mark); got != tt.want {
				t.Fatalf("behind(%+v, %#x) = %v, want %v", tt.file, tt.mark, got, tt.want)
			}
		})
	}
	for _, r := range []*driver.Record{rec(a, 0), rec(a, 1), rec(b, 2048), rec("", 5)} {
		if m := markOf(r); m == markNone || m == markCleared || m&^markBits != 0 {
			t.Errorf("markOf(%+v) = %#x: want a record's mark, within the mark's bits", r, m)
		}
	}
}

// TestCounterKeepsMark: a slot's counter, after a change, is stable and
// holds the mark given, whatever its random bits; a change gives it a value
// it did not hold.
func TestCounterKeepsMark(t *testing.T) {
	m := &mapping{data: make([]byte, indexSize)}
	c := counter{m: m, off: slotsOffset + 8, owned: true}
	mark := markOf(&driver.Record{Incarnation: "x", Version: 3})
	prev := uint64(0)
	for range 1000 {
		v := c.begin()
		if c.stable(v) {
			t.Fatalf("begin = %#x: want an unstable value", v)
		}
		after := c.end(v, mark)
		if !c.stable(after) || markOfValue(after) != mark || after == prev {
			t.Fatalf("end = %#x (after %#x): want stable, marked %#x, changed", after, prev, mark)
		}
		prev = after
	}
}
