//go:build linux

package fleetnemesis

// The checker. A worker's history is a sequence of lines (times are
// CLOCK_MONOTONIC nanoseconds, which every process shares):
//
//	A <circuit> <begin> <admit> <probe 0|1>   a call admitted: it began (before Run) at begin and its
//	                                          operation at admit; the decision lies in between
//	C <circuit> <at>                          a probe's settlement closed the circuit after at (its
//	                                          operation's end)
//	T <calls> <admitted>              the worker's totals, at its end
//
// The nemesis keeps the openings it made (a ForceOpen, sent and returned,
// and the deadline it set) and the faults it injected. Every admitted call
// that is not a probe, begun while a circuit was forced open, more than the
// stall bound after the opening's write returned, and not after a probe
// closed the circuit (which only a lost dataset allows), is a violation: a
// late admission, or a lost opening when a fault that loses the dataset came
// in between. Each judgement is conservative: a call is late only if it
// began late, inside the opening only if its operation began before the
// deadline, and after a closing if its operation began after the probe's
// ended.

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// admission is an admitted call.
type admission struct {
	circuit      string
	begin, admit int64
	probe        bool
}

// closing is a probe's settlement that closed a circuit.
type closing struct {
	circuit string
	at      int64
}

// opening is a ForceOpen the nemesis made: sent, returned, and the end of
// the span it surely holds the circuit open (its send time + its
// duration, less a margin for the server's clock).
type opening struct {
	circuit         string
	sent, ret, till int64
}

// fault is a fault the nemesis injected, from start to end.
type fault struct {
	kind       string
	start, end int64
}

// loses reports whether the fault loses the dataset.
func (f fault) loses() bool {
	return f.kind == "restart-lossy" || f.kind == "flushall" || f.kind == "truncate"
}

// histories are the parsed histories of every worker.
type histories struct {
	admissions      []admission
	closings        []closing
	calls, admitted int64
}

// parse adds a worker's history to h.
func (h *histories) parse(r io.Reader) error {
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		f := strings.Fields(sc.Text())
		bad := func() error { return fmt.Errorf("history line %d: %q", ln, sc.Text()) }
		switch {
		case len(f) == 5 && f[0] == "A":
			begin, err1 := strconv.ParseInt(f[2], 10, 64)
			admit, err2 := strconv.ParseInt(f[3], 10, 64)
			if err1 != nil || err2 != nil {
				return bad()
			}
			h.admissions = append(h.admissions, admission{f[1], begin, admit, f[4] == "1"})
		case len(f) == 3 && f[0] == "C":
			at, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return bad()
			}
			h.closings = append(h.closings, closing{f[1], at})
		case len(f) == 3 && f[0] == "T":
			calls, err1 := strconv.ParseInt(f[1], 10, 64)
			admitted, err2 := strconv.ParseInt(f[2], 10, 64)
			if err1 != nil || err2 != nil {
				return bad()
			}
			h.calls += calls
			h.admitted += admitted
		default:
			return bad()
		}
	}
	return sc.Err()
}

// violation is a broken guarantee.
type violation struct {
	kind   string // "late admission" or "lost opening"
	detail string
}

// report is what a run found.
type report struct {
	faults          map[string]int   // faults injected, by kind
	worst           map[string]int64 // the worst admission lag after an opening, by the fault kinds around it ("none")
	around          map[string]int   // openings, by the fault kinds around them
	calls, admitted int64
	openings        int
	violations      []violation
}

// checkSlack absorbs the granularity of the clock readings around a call.
const checkSlack = time.Millisecond

// check judges the histories against the openings, with the faults
// injected and the stall bound of the workers' stores.
func check(h *histories, openings []opening, faults []fault, bound time.Duration) report {
	rep := report{faults: map[string]int{}, worst: map[string]int64{}, around: map[string]int{}, calls: h.calls, admitted: h.admitted, openings: len(openings)}
	for _, f := range faults {
		rep.faults[f.kind]++
	}
	for _, o := range openings {
		kinds := faultsAround(faults, o.sent-int64(bound), o.ret+int64(bound))
		for _, k := range kinds {
			rep.around[k]++
			rep.worst[k] += 0
		}
		for _, a := range h.admissions {
			if a.circuit != o.circuit || a.probe || a.begin <= o.ret || a.admit >= o.till {
				continue
			}
			if slices.ContainsFunc(h.closings, func(c closing) bool { return c.circuit == o.circuit && c.at > o.sent && c.at < a.admit }) {
				continue // a probe closed it: the lost dataset's rule
			}
			lag := a.begin - o.ret
			for _, k := range kinds {
				rep.worst[k] = max(rep.worst[k], lag)
			}
			if lag <= int64(bound+checkSlack) {
				continue
			}
			kind := "late admission"
			if slices.ContainsFunc(faults, func(f fault) bool { return f.loses() && f.start < a.begin && f.end > o.sent }) {
				kind = "lost opening"
			}
			rep.violations = append(rep.violations, violation{kind, fmt.Sprintf("circuit %s: a call begun %v after its opening returned (stall bound %v), not a probe, faults around the opening: %s",
				o.circuit, time.Duration(lag).Round(time.Microsecond), bound, faultTimes(faults, o))})
		}
	}
	return rep
}

// faultTimes lists the faults around the opening o with their spans
// relative to the time its write returned.
func faultTimes(faults []fault, o opening) string {
	var b strings.Builder
	for _, f := range faults {
		if f.start <= o.till && f.end >= o.sent-int64(2*time.Second) {
			fmt.Fprintf(&b, "%s %v..%v; ", f.kind, time.Duration(f.start-o.ret).Round(time.Millisecond), time.Duration(f.end-o.ret).Round(time.Millisecond))
		}
	}
	if b.Len() == 0 {
		return "none"
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// faultsAround returns the kinds of the faults that overlap [from, to], or
// "none".
func faultsAround(faults []fault, from, to int64) []string {
	kinds := map[string]bool{}
	for _, f := range faults {
		if f.start <= to && f.end >= from {
			kinds[f.kind] = true
		}
	}
	if len(kinds) == 0 {
		return []string{"none"}
	}
	return slices.Sorted(maps.Keys(kinds))
}

// String prints the report: faults, calls, openings, violations, and the
// worst lag under each fault kind.
func (r report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "faults:")
	for _, k := range slices.Sorted(maps.Keys(r.faults)) {
		fmt.Fprintf(&b, " %s %d", k, r.faults[k])
	}
	fmt.Fprintf(&b, "\nguarded calls %d, admitted %d; openings %d\n", r.calls, r.admitted, r.openings)
	late, lost := 0, 0
	for _, v := range r.violations {
		if v.kind == "lost opening" {
			lost++
		} else {
			late++
		}
	}
	fmt.Fprintf(&b, "late admissions %d, lost openings %d\n", late, lost)
	fmt.Fprintf(&b, "the latest a call was admitted after an opening, by the faults around the opening (openings):")
	for _, k := range slices.Sorted(maps.Keys(r.worst)) {
		fmt.Fprintf(&b, " %s %v (%d);", k, time.Duration(r.worst[k]).Round(time.Millisecond), r.around[k])
	}
	return b.String()
}
