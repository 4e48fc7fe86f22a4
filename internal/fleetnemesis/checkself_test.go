//go:build linux

package fleetnemesis

import (
	"strings"
	"testing"
	"time"
)

// TestChecker checks the checker on histories made by hand: an admission
// within the bound, a probe and the calls after its closing are legal; an
// admission later than the bound is a late admission, or a lost opening
// when a flush came in between.
func TestChecker(t *testing.T) {
	const ms = int64(time.Millisecond)
	bound := 100 * time.Millisecond
	opens := []opening{{circuit: "fleet-a", sent: 1000 * ms, ret: 1002 * ms, till: 3000 * ms}}
	tests := []struct {
		name    string
		history string
		faults  []fault
		want    string // the violations' kinds, joined
	}{
		{"WithinBound", "A fleet-a 1050000000 1050001000 0\n", nil, ""},
		{"BeforeOpening", "A fleet-a 900000000 900001000 0\n", nil, ""},
		{"AfterDeadline", "A fleet-a 3100000000 3100001000 0\n", nil, ""},
		{"Late", "A fleet-a 1200000000 1200001000 0\n", nil, "late admission"},
		{"ProbeThenClosed", "A fleet-a 1200000000 1200001000 1\nC fleet-a 1210000000\nA fleet-a 1300000000 1300001000 0\n", nil, ""},
		{"LostOpening", "A fleet-a 1200000000 1200001000 0\n", []fault{{"flushall", 1100 * ms, 1110 * ms}}, "lost opening"},
		{"OtherCircuit", "A fleet-b 1200000000 1200001000 0\n", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &histories{}
			if err := h.parse(strings.NewReader(tt.history + "T 10 3\n")); err != nil {
				t.Fatal(err)
			}
			rep := check(h, opens, tt.faults, bound)
			var kinds []string
			for _, v := range rep.violations {
				kinds = append(kinds, v.kind)
			}
			if got := strings.Join(kinds, ","); got != tt.want {
				t.Errorf("violations %q, want %q\n%s", got, tt.want, rep)
			}
			if rep.calls != 10 || rep.admitted != 3 {
				t.Errorf("totals %d, %d: want 10, 3", rep.calls, rep.admitted)
			}
		})
	}
}
