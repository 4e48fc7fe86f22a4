//go:build linux

package filestore

// The nemesis checker: it reads the histories the nemesis workers wrote and
// finds the calls the store must never have admitted. Every time in a
// history is the kernel's boot clock (CLOCK_BOOTTIME), which every process
// on the server reads alike and which no fault of the nemesis can move; the
// store's own clock is that clock plus an anchor kept in the state directory,
// which the nemesis tampers with, so the checker judges by the boot clock.
//
// A history is a sequence of lines, one write(2) each, appended to the
// worker's own file (so a SIGKILL leaves every line whole):
//
//	C <op> <kind> <circuit> <boot>                  a call starts: allow, snap or clear
//	A <op> <boot> <probe 0|1|2> <store now>         admitted (2: by Run, probe unless heard claiming one;
//	                                                store now: Store.Now after it)
//	E <op> <boot> <outcome>                         its operation ended; Done starts
//	D <op> <boot> <result> <message>                Done, or Clear, returned
//	R <op> <boot> <result> <message>                allow or snap failed or was rejected
//	N <op> <boot> <state> <gen> <failures> <exists> a snapshot
//	T <op> <circuit> <from> <to> <gen> <failures> <at> <boot>
//	                                                a transition this op committed (an Observer)
//	O <boot> <message>                              Open refused the state directory (a *DirError)
//
// A result is "ok", "open:<state>", "state:<op>[:ran][:corrupt]", "ctx" or
// "other"; a message is a quoted string.
//
// Each judgement is conservative: an event counts as inside an interval only
// when every instant at which it may have happened lies inside it, so a
// process stopped or slow between two readings of the clock widens the
// uncertainty, never a violation.

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

// nemesisSlack absorbs the difference between two anchors of the store's
// clock taken from the wall clock at different moments of one boot (the
// wall clock is slewed by NTP, microseconds); a deadline a process applies
// up to this much early is not reported.
const nemesisSlack = 2 * time.Millisecond

// nOp is one call in a history. Times are boot-clock nanoseconds; zero is
// unknown (the worker died first).
type nOp struct {
	id, kind, circuit string
	call, admit, end  int64 // call start; admitted; operation ended (Done starts)
	ret               int64 // the call, or Done, returned
	admitted, probe   bool
	result, msg       string // of the admission, or of Done when admitted
	storeNow          int64  // Store.Now at admission, Unix nanoseconds
	snap              nSnap
	trans             []nTrans
}

// nSnap is what a snapshot read.
type nSnap struct {
	state    circuit.State
	gen      uint64
	failures int
	exists   bool
}

// nTrans is a transition an op committed, heard by its Breaker's Observer.
type nTrans struct {
	from, to circuit.State
	gen      uint64
	at       int64 // the store's time of the decision, Unix nanoseconds
	boot     int64 // when the Observer heard it: after the commit
}

// nSpan is a span of boot time [start, end] (end 0: unknown) during which
// something happened to a circuit ("" for every circuit).
type nSpan struct {
	circuit    string
	start, end int64
}

// nFaultLog is what the nemesis did that the checker must know of.
type nFaultLog struct {
	// resets removed records: a Clear, or the nemesis removing record
	// files. After one the circuit starts afresh, and admitting calls is
	// legal again.
	resets []nSpan
	// unwritable are spans during which no write could succeed: the state
	// directory read-only to the workers (no temporary record can be
	// created, nothing renamed).
	unwritable []nSpan
	// stale are faults after which a process may use copies of records the
	// change index no longer vouches for, until it checks the index again:
	// the index rolled back in place, the state directory replaced.
	stale []nStale
}

// nStale excuses the admissions a fault allows: until a process checks the
// change index again (within recheck of its last check, and its ticker's
// delay), it may use a copy of a record read before the fault. So a call
// that starts before until may contradict an interval begun (heard) at or
// after after whose owner decided, at the latest, at before (0: any time;
// a rollback hides only the writes made before it ends).
type nStale struct {
	after, before, until int64
}

// excuses reports whether st allows x, admitted within iv.
func (st nStale) excuses(iv nInterval, x *nOp) bool {
	decided := iv.owner.end // an opening is decided after its operation ended
	if iv.why == "probe" {
		decided = iv.owner.call
	}
	return iv.start >= st.after && (st.before == 0 || decided <= st.before) && x.call < st.until
}

// nViolation is a broken guarantee.
type nViolation struct {
	kind, detail string
	at           int64 // when, by the boot clock, if known: the admission, or the failure
}

func (v nViolation) String() string { return v.kind + ": " + v.detail }

// parseHistory reads a worker's history. A last line cut short (the worker
// was killed mid-write) cannot happen with one write(2) per line, but is
// ignored all the same.
func parseHistory(r io.Reader) ([]*nOp, error) {
	ops := map[string]*nOp{}
	var order []*nOp
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ln := 0
	for sc.Scan() {
		ln++
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("line %d: %q: too short", ln, line)
		}
		num := func(i int) int64 {
			if i >= len(f) {
				return 0
			}
			n, _ := strconv.ParseInt(f[i], 10, 64)
			return n
		}
		quoted := func(i int) string {
			rest := strings.SplitN(line, " ", i+1)
			if len(rest) <= i {
				return ""
			}
			s, err := strconv.Unquote(rest[i])
			if err != nil {
				return rest[i]
			}
			return s
		}
		if f[0] == "O" {
			order = append(order, &nOp{kind: "open", call: num(1), ret: num(1), result: "dir", msg: quoted(2)})
			continue
		}
		if f[0] == "C" {
			if len(f) != 5 {
				return nil, fmt.Errorf("line %d: %q: malformed call", ln, line)
			}
			op := &nOp{id: f[1], kind: f[2], circuit: f[3], call: num(4)}
			ops[op.id] = op
			order = append(order, op)
			continue
		}
		op := ops[f[1]]
		if op == nil {
			return nil, fmt.Errorf("line %d: %q: no call %s before it", ln, line, f[1])
		}
		switch f[0] {
		case "A":
			op.admit, op.admitted, op.probe, op.storeNow = num(2), true, f[3] == "1", num(4)
			if f[3] == "2" { // Run: a probe when its Observer heard it claim one
				op.probe = slices.ContainsFunc(op.trans, func(tr nTrans) bool { return tr.to == circuit.StateHalfOpen })
			}
		case "E":
			op.end = num(2)
		case "D", "R":
			op.ret, op.result, op.msg = num(2), f[3], quoted(4)
		case "N":
			op.ret, op.result = num(2), "ok"
			op.snap = nSnap{state: circuit.State(num(3)), gen: uint64(num(4)), failures: int(num(5)), exists: f[6] == "1"}
		case "T":
			if len(f) != 9 {
				return nil, fmt.Errorf("line %d: %q: malformed transition", ln, line)
			}
			op.trans = append(op.trans, nTrans{from: circuit.State(num(3)), to: circuit.State(num(4)), gen: uint64(num(5)), at: num(7), boot: num(8)})
		default:
			return nil, fmt.Errorf("line %d: %q: unknown event", ln, line)
		}
	}
	return order, sc.Err()
}

// nInterval is a span of boot time during which a circuit must admit no
// call but, for a probe window, its own probe.
type nInterval struct {
	start, end int64
	why        string
	owner      *nOp // the probe whose claim it is, or the op that opened
}

// checkHistory finds, in the ops of every worker, the calls admitted on a
// circuit that was durably open or whose probe claim was held, given the
// nemesis's log and the policy every worker used:
//
//   - open: an op's Observer heard the circuit open at boot time h, after
//     the commit; the decision was taken after the op's operation ended
//     (e), so the record says open until at least e+Cooldown. Any call
//     admitted entirely within [h, e+Cooldown) was admitted on a durably
//     open circuit, a probe included (its cooldown was not over).
//   - probe: a probe admitted by time a, whose call started at c, holds its
//     claim from a until its operation ended (Done starts) or, at the
//     latest, c+ProbeLease, when its lease ends whatever happened to its
//     process. Any other call admitted entirely within that window is a
//     second probe in flight, or a call admitted on a half-open circuit.
//
// A reset that may have happened after an interval began ends it where the
// reset began. An admission a stale fault excuses (nStale) is counted, not
// reported.
//
// And the rule that an unwritable store fails closed: once a write for a
// circuit failed in a process (a StateError from a replace or a delete), that
// process admits no call on it until a write succeeds. No write can succeed
// while the state directory is unwritable, so any call the process admitted
// on that circuit entirely after the failure and before the directory became
// writable again breaks it.
func checkHistory(ops []*nOp, log nFaultLog, p circuit.Policy) (out []nViolation, excused int) {
	slack := int64(nemesisSlack)
	resets := slices.Clone(log.resets)
	byCircuit := map[string][]*nOp{} // admitted calls, by call start
	var intervals []struct {
		circuit string
		nInterval
	}
	add := func(c string, iv nInterval) {
		for _, r := range resets {
			if (r.circuit == "" || r.circuit == c) && (r.end == 0 || r.end >= iv.start) {
				iv.end = min(iv.end, r.start)
			}
		}
		if iv.end > iv.start {
			intervals = append(intervals, struct {
				circuit string
				nInterval
			}{c, iv})
		}
	}
	for _, op := range ops {
		if op.kind == "clear" {
			resets = append(resets, nSpan{circuit: op.circuit, start: op.call, end: op.ret})
		}
	}
	for _, op := range ops {
		if op.admitted {
			byCircuit[op.circuit] = append(byCircuit[op.circuit], op)
		}
		for _, tr := range op.trans {
			if tr.to == circuit.StateOpen && op.end != 0 {
				add(op.circuit, nInterval{start: tr.boot, end: op.end + int64(p.Cooldown) - slack, why: "open", owner: op})
			}
		}
		if op.admitted && op.probe {
			end := op.call + int64(p.ProbeLease) - slack
			if op.end != 0 {
				end = min(end, op.end)
			}
			add(op.circuit, nInterval{start: op.admit, end: end, why: "probe", owner: op})
		}
	}
	for _, list := range byCircuit {
		sort.Slice(list, func(i, j int) bool { return list[i].call < list[j].call })
	}
	for _, iv := range intervals {
		list := byCircuit[iv.circuit]
		i := sort.Search(len(list), func(i int) bool { return list[i].call >= iv.start })
		for ; i < len(list) && list[i].call < iv.end; i++ {
			x := list[i]
			if x == iv.owner || x.admit >= iv.end {
				continue
			}
			if slices.ContainsFunc(log.stale, func(st nStale) bool { return st.excuses(iv.nInterval, x) }) {
				excused++
				continue
			}
			what := "a call"
			if x.probe {
				what = "a probe"
			}
			switch iv.why {
			case "open":
				out = append(out, nViolation{kind: "admitted while open", at: x.admit, detail: fmt.Sprintf(
					"%s: %s (op %s) admitted %v after %s opened it (heard at boot %v), %v before its cooldown could end",
					iv.circuit, what, x.id, time.Duration(x.admit-iv.start), iv.owner.id, time.Duration(iv.start),
					time.Duration(iv.end-x.admit))})
			case "probe":
				kind := "admitted while half-open"
				if x.probe {
					kind = "two probes in flight"
				}
				out = append(out, nViolation{kind: kind, at: x.admit, detail: fmt.Sprintf(
					"%s: %s (op %s) admitted %v after probe %s was, while its claim held (%v before its lease or its end)",
					iv.circuit, what, x.id, time.Duration(x.admit-iv.start), iv.owner.id, time.Duration(iv.end-x.admit))})
			}
		}
	}
	out = append(out, failClosed(ops, log)...)
	for _, op := range ops {
		switch {
		case strings.HasPrefix(op.result, "state:") && strings.Contains(op.msg, "concurrent changes"):
			out = append(out, nViolation{kind: "livelock", at: op.ret, detail: fmt.Sprintf("%s: op %s (%s): %s", op.circuit, op.id, op.kind, op.msg)})
		case op.result == "other":
			out = append(out, nViolation{kind: "untyped error", detail: fmt.Sprintf("%s: op %s (%s): %s", op.circuit, op.id, op.kind, op.msg)})
		}
	}
	slices.SortFunc(out, func(a, b nViolation) int { return strings.Compare(a.kind+a.detail, b.kind+b.detail) })
	return out, excused
}

// failClosed finds the calls a process admitted on a circuit after a
// write for it failed in that process, while no write could succeed. A
// reset of the circuit between the two (its record removed by hand,
// outside the store's model) starts it afresh: the settlement the write
// failed to store then has nothing to change, and admitting is legal. A
// call refused for a settlement owed (owed.go) is no write of its own:
// the write that failed came before it.
func failClosed(ops []*nOp, log nFaultLog) []nViolation {
	out, _ := failedWrites(ops, log.unwritable, log.resets)
	return out
}

// owedRefusal is in the message of a call refused for a settlement owed.
const owedRefusal = "a settlement could not be written"

// failedWrites returns failClosed's violations and how many writes failed
// while the directory was unwritable.
func failedWrites(ops []*nOp, unwritable, resets []nSpan) ([]nViolation, int) {
	resetBetween := func(circuit string, from, to int64) bool {
		return slices.ContainsFunc(resets, func(r nSpan) bool {
			return (r.circuit == "" || r.circuit == circuit) && r.end >= from && r.start <= to
		})
	}
	var out []nViolation
	failed := 0
	later := map[string][]*nOp{} // worker and circuit → its admitted calls
	key := func(op *nOp) string {
		w, _, _ := strings.Cut(op.id, ".")
		return w + " " + op.circuit
	}
	for _, op := range ops {
		if op.admitted {
			later[key(op)] = append(later[key(op)], op)
		}
	}
	for _, f := range ops {
		if !strings.HasPrefix(f.result, "state:replace") && !strings.HasPrefix(f.result, "state:delete") ||
			strings.Contains(f.msg, owedRefusal) {
			continue
		}
	spans:
		for _, u := range unwritable {
			if (u.circuit != "" && u.circuit != f.circuit) || f.ret < u.start || u.end == 0 || f.ret > u.end {
				continue
			}
			failed++
			for _, x := range later[key(f)] {
				if x.call >= f.ret && x.admit <= u.end && !resetBetween(f.circuit, f.ret, x.admit) {
					out = append(out, nViolation{kind: "admitted after a failed write", at: x.admit, detail: fmt.Sprintf(
						"%s: op %s admitted %v after op %s's write failed (%s), while the directory was unwritable",
						f.circuit, x.id, time.Duration(x.admit-f.ret), f.id, f.msg)})
					break spans // the first is enough for this failure
				}
			}
		}
	}
	return out, failed
}

// nStats are the figures of a history.
type nStats struct {
	calls, admitted, probes, rejected, stateErrors, ctxErrors, snapshots, clears, transitions, opensRefused int
	anchors                                                                                                 int64 // the spread of the store's clock anchors seen, ns
}

func historyStats(ops []*nOp) nStats {
	var st nStats
	lo, hi := int64(0), int64(0)
	for _, op := range ops {
		st.transitions += len(op.trans)
		switch op.kind {
		case "snap":
			st.snapshots++
			continue
		case "clear":
			st.clears++
			continue
		case "open":
			st.opensRefused++
			continue
		}
		st.calls++
		switch {
		case op.admitted:
			st.admitted++
			if op.probe {
				st.probes++
			}
			if a := op.storeNow - op.admit; op.storeNow != 0 {
				if lo == 0 || a < lo {
					lo = a
				}
				hi = max(hi, a)
			}
		case strings.HasPrefix(op.result, "open:"):
			st.rejected++
		}
		switch {
		case strings.HasPrefix(op.result, "state:"):
			st.stateErrors++
		case op.result == "ctx":
			st.ctxErrors++
		}
	}
	st.anchors = hi - lo
	return st
}

// TestNemesisCheckerCatches gives the nemesis checker hand-made histories,
// each with one of the violations it must find, or with a legal run that
// comes close to one. Times are milliseconds of the boot clock; the policy
// is nemPolicy's (1s cooldown, 1s lease).
func TestNemesisCheckerCatches(t *testing.T) {
	const ms = 1_000_000
	// Shorthands for history lines.
	call := func(op, kind, c string, at int) string { return fmt.Sprintf("C %s %s %s %d", op, kind, c, at*ms) }
	admit := func(op string, at int, probe bool) string {
		p := 0
		if probe {
			p = 1
		}
		return fmt.Sprintf("A %s %d %d %d", op, at*ms, p, 1_700_000_000_000*ms+at*ms)
	}
	end := func(op string, at int, o int) string { return fmt.Sprintf("E %s %d %d", op, at*ms, o) }
	done := func(op string, at int) string { return fmt.Sprintf(`D %s %d ok ""`, op, at*ms) }
	failedWrite := func(op string, at int) string { return fmt.Sprintf(`D %s %d state:replace:ran "EACCES"`, op, at*ms) }
	opened := func(op, c string, at int) string { return fmt.Sprintf("T %s %s 0 1 1 2 0 %d", op, c, at*ms) }
	// w1.1 fails at 100 ms and opens nem-a (heard at 150 ms) until at least 1.1 s.
	openA := []string{call("w1.1", "allow", "nem-a", 0), admit("w1.1", 10, false), end("w1.1", 100, 2), opened("w1.1", "nem-a", 150), done("w1.1", 160)}
	// w1.2 is a probe of nem-a admitted at 2 s, whose operation ends at 3.5 s:
	// its claim holds until its lease ends, 1 s after its call.
	probeA := []string{call("w1.2", "allow", "nem-a", 1990), admit("w1.2", 2000, true), end("w1.2", 3500, 1), done("w1.2", 3510)}

	tests := []struct {
		name   string
		w1, w2 []string
		log    nFaultLog
		want   []string // violation kinds
	}{
		{name: "call admitted while open", w1: openA,
			w2: []string{call("w2.1", "allow", "nem-a", 300), admit("w2.1", 310, false)}, want: []string{"admitted while open"}},
		{name: "probe before the cooldown ended", w1: openA,
			w2: []string{call("w2.1", "allow", "nem-a", 1000), admit("w2.1", 1050, true)}, want: []string{"admitted while open"}},
		{name: "probe after the cooldown", w1: openA,
			w2: []string{call("w2.1", "allow", "nem-a", 1100), admit("w2.1", 1110, true)}},
		{name: "call admitted before the open was heard", w1: openA,
			w2: []string{call("w2.1", "allow", "nem-a", 140), admit("w2.1", 200, false)}},
		{name: "another circuit", w1: openA,
			w2: []string{call("w2.1", "allow", "nem-b", 300), admit("w2.1", 310, false)}},
		{name: "after the record was removed", w1: openA, log: nFaultLog{resets: []nSpan{{circuit: "nem-a", start: 250 * ms, end: 251 * ms}}},
			w2: []string{call("w2.1", "allow", "nem-a", 300), admit("w2.1", 310, false)}},
		{name: "after every record was removed", w1: openA, log: nFaultLog{resets: []nSpan{{start: 250 * ms, end: 251 * ms}}},
			w2: []string{call("w2.1", "allow", "nem-a", 300), admit("w2.1", 310, false)}},
		{name: "after a Clear", w1: openA,
			w2: []string{call("w2.1", "clear", "nem-a", 200), done("w2.1", 210), call("w2.2", "allow", "nem-a", 300), admit("w2.2", 310, false)}},
		{name: "two probes in flight", w1: probeA,
			w2: []string{call("w2.1", "allow", "nem-a", 2500), admit("w2.1", 2600, true)}, want: []string{"two probes in flight"}},
		{name: "a probe of a killed worker still holds its claim", w1: probeA[:2],
			w2: []string{call("w2.1", "allow", "nem-a", 2500), admit("w2.1", 2600, true)}, want: []string{"two probes in flight"}},
		{name: "a new probe once the lease ended", w1: probeA,
			w2: []string{call("w2.1", "allow", "nem-a", 2990), admit("w2.1", 3000, true)}},
		{name: "a call admitted while half-open", w1: probeA,
			w2: []string{call("w2.1", "allow", "nem-a", 2100), admit("w2.1", 2200, false)}, want: []string{"admitted while half-open"}},
		{name: "a call admitted once the probe closed the circuit",
			w1: []string{call("w1.2", "allow", "nem-a", 1990), admit("w1.2", 2000, true), end("w1.2", 2100, 1), done("w1.2", 2110)},
			w2: []string{call("w2.1", "allow", "nem-a", 2105), admit("w2.1", 2200, false)}},
		{name: "a stale copy after the directory was replaced", w1: openA, log: nFaultLog{stale: []nStale{{after: 120 * ms, until: 1400 * ms}}},
			w2: []string{call("w2.1", "allow", "nem-a", 300), admit("w2.1", 310, false)}},
		{name: "a stale copy past the recheck", w1: openA, log: nFaultLog{stale: []nStale{{after: 120 * ms, until: 250 * ms}}},
			w2: []string{call("w2.1", "allow", "nem-a", 300), admit("w2.1", 310, false)}, want: []string{"admitted while open"}},
		{name: "an opening before the directory was replaced", w1: openA, log: nFaultLog{stale: []nStale{{after: 200 * ms, until: 1400 * ms}}},
			w2: []string{call("w2.1", "allow", "nem-a", 300), admit("w2.1", 310, false)}, want: []string{"admitted while open"}},
		{name: "a stale copy after a rollback hid the opening", w1: openA, log: nFaultLog{stale: []nStale{{after: 50 * ms, before: 200 * ms, until: 1400 * ms}}},
			w2: []string{call("w2.1", "allow", "nem-a", 300), admit("w2.1", 310, false)}},
		{name: "an opening decided after the rollback", w1: openA, log: nFaultLog{stale: []nStale{{after: 20 * ms, before: 90 * ms, until: 1400 * ms}}},
			w2: []string{call("w2.1", "allow", "nem-a", 300), admit("w2.1", 310, false)}, want: []string{"admitted while open"}},
		{name: "a stale copy while a probe held its claim", w1: probeA, log: nFaultLog{stale: []nStale{{after: 1500 * ms, until: 3000 * ms}}},
			w2: []string{call("w2.1", "allow", "nem-a", 2100), admit("w2.1", 2200, false)}},
		{name: "livelock",
			w1:   []string{call("w1.1", "allow", "nem-a", 0), `R w1.1 5 state:replace "circuit nem-a: state replace: gave up after 1000 concurrent changes"`},
			want: []string{"livelock"}},
		{name: "untyped error",
			w1: []string{call("w1.1", "allow", "nem-a", 0), `R w1.1 5 other "boom"`}, want: []string{"untyped error"}},
		{name: "fail closed",
			w1: []string{call("w1.1", "allow", "nem-a", 0), `R w1.1 5 state:load "circuit nem-a: state load: EMFILE"`}},
		{name: "a call admitted after a failed write", log: nFaultLog{unwritable: []nSpan{{start: 0, end: 500 * ms}}},
			w1: []string{call("w1.1", "allow", "nem-a", 0), admit("w1.1", 10, false), end("w1.1", 100, 2), failedWrite("w1.1", 110),
				call("w1.2", "allow", "nem-a", 200), admit("w1.2", 210, false)},
			want: []string{"admitted after a failed write"}},
		{name: "a call admitted after a failed write and the record's removal", log: nFaultLog{unwritable: []nSpan{{start: 0, end: 500 * ms}},
			resets: []nSpan{{circuit: "nem-a", start: 150 * ms, end: 151 * ms}}},
			w1: []string{call("w1.1", "allow", "nem-a", 0), admit("w1.1", 10, false), end("w1.1", 100, 2), failedWrite("w1.1", 110),
				call("w1.2", "allow", "nem-a", 200), admit("w1.2", 210, false)}},
		{name: "a call admitted after a failed write, the record removed before it failed", log: nFaultLog{unwritable: []nSpan{{start: 0, end: 500 * ms}},
			resets: []nSpan{{circuit: "nem-a", start: 50 * ms, end: 51 * ms}}},
			w1: []string{call("w1.1", "allow", "nem-a", 0), admit("w1.1", 10, false), end("w1.1", 100, 2), failedWrite("w1.1", 110),
				call("w1.2", "allow", "nem-a", 200), admit("w1.2", 210, false)},
			want: []string{"admitted after a failed write"}},
		{name: "a call admitted after a removal, the call before it refused for the settlement owed", log: nFaultLog{unwritable: []nSpan{{start: 0, end: 500 * ms}},
			resets: []nSpan{{circuit: "nem-a", start: 150 * ms, end: 151 * ms}}},
			w1: []string{call("w1.1", "allow", "nem-a", 0), admit("w1.1", 10, false), end("w1.1", 100, 2), failedWrite("w1.1", 110),
				call("w1.2", "allow", "nem-a", 120), `R w1.2 160000000 state:replace "circuit nem-a: state replace: a settlement could not be written, and no call is admitted until it is: EACCES"`,
				call("w1.3", "allow", "nem-a", 200), admit("w1.3", 210, false)}},
		{name: "a call admitted by another process after a failed write", log: nFaultLog{unwritable: []nSpan{{start: 0, end: 500 * ms}}},
			w1: []string{call("w1.1", "allow", "nem-a", 0), admit("w1.1", 10, false), end("w1.1", 100, 2), failedWrite("w1.1", 110)},
			w2: []string{call("w2.2", "allow", "nem-a", 200), admit("w2.2", 210, false)}},
		{name: "a call admitted once the directory was writable", log: nFaultLog{unwritable: []nSpan{{start: 0, end: 150 * ms}}},
			w1: []string{call("w1.1", "allow", "nem-a", 0), admit("w1.1", 10, false), end("w1.1", 100, 2), failedWrite("w1.1", 110),
				call("w1.2", "allow", "nem-a", 200), admit("w1.2", 210, false)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ops []*nOp
			for _, h := range [][]string{tt.w1, tt.w2} {
				if len(h) == 0 {
					continue
				}
				got, err := parseHistory(strings.NewReader(strings.Join(h, "\n") + "\n"))
				if err != nil {
					t.Fatal(err)
				}
				ops = append(ops, got...)
			}
			var kinds []string
			vs, _ := checkHistory(ops, tt.log, nemPolicy)
			for _, v := range vs {
				kinds = append(kinds, v.kind)
			}
			if !slices.Equal(kinds, tt.want) {
				t.Errorf("violations %q, want kinds %q", vs, tt.want)
			}
		})
	}
}

// TestNemesisFinalCallsJudged gives the judgement of the final calls
// hand-made histories: a call that found the index damaged and replaced it
// fails closed by the damage rule, and is accepted only when the call made
// after it on that circuit succeeds.
func TestNemesisFinalCallsJudged(t *testing.T) {
	const ms = 1_000_000
	const quiet = 1000 * ms
	repaired := `R w1.2 1101000000 state:load "circuit nem-a: state load: change index /s/index is damaged (its clock anchor changed to a later one than this process validated): replaced it with a new one; this call fails closed"`
	ok := func(op string, at int) []string {
		return []string{fmt.Sprintf("C %s allow nem-a %d", op, at*ms), fmt.Sprintf("A %s %d 0 0", op, (at+1)*ms),
			fmt.Sprintf("E %s %d 0", op, (at+2)*ms), fmt.Sprintf(`D %s %d ok ""`, op, (at+3)*ms)}
	}
	tests := []struct {
		name string
		h    []string
		want int // not recovered
	}{
		{name: "every final call succeeds", h: ok("w1.2", 1100)},
		{name: "a call before the quiet is not final", h: append([]string{"C w1.1 allow nem-a 900000000", `R w1.1 901000000 state:load "EMFILE"`}, ok("w1.2", 1100)...)},
		{name: "a final call fails", h: []string{"C w1.2 allow nem-a 1100000000", `R w1.2 1101000000 state:load "EMFILE"`}, want: 1},
		{name: "a repair, then a success", h: append([]string{"C w1.2 allow nem-a 1100000000", repaired}, ok("w1.3", 1200)...)},
		{name: "a repair, and no call after it", h: []string{"C w1.2 allow nem-a 1100000000", repaired}, want: 1},
		{name: "a repair, then a failure", h: []string{"C w1.2 allow nem-a 1100000000", repaired, "C w1.3 allow nem-a 1200000000", `R w1.3 1201000000 state:load "EMFILE"`}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, err := parseHistory(strings.NewReader(strings.Join(tt.h, "\n") + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if _, got := finalCalls("w1", ops, quiet, 0); len(got) != tt.want {
				t.Errorf("violations %v, want %d", got, tt.want)
			}
		})
	}
}

// TestNemesisDeathJudged checks how the nemesis judges the end of a
// worker: only the nemesis's own SIGKILL, or a clean exit once told to,
// is not a violation.
func TestNemesisDeathJudged(t *testing.T) {
	tests := []struct {
		name            string
		script          string
		killed, closing bool
		want            bool // a violation
	}{
		{name: "SIGKILL from the nemesis", script: "kill -KILL $$", killed: true},
		{name: "SIGKILL from elsewhere", script: "kill -KILL $$", want: true},
		{name: "SIGBUS", script: "kill -BUS $$", want: true},
		{name: "SIGSEGV after the nemesis's kill was sent", script: "kill -SEGV $$", killed: true, want: true},
		{name: "a Go fatal error (status 2)", script: "echo 'fatal error: fault' >&2; exit 2", closing: true, want: true},
		{name: "clean exit when told", script: "exit 0", closing: true},
		{name: "clean exit before being told", script: "exit 0", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &nemChild{id: "w1", killed: tt.killed, closing: tt.closing, cmd: exec.Command("/bin/sh", "-c", tt.script)}
			c.cmd.Stderr = &c.stderr
			c.waitErr = c.cmd.Run()
			if v := c.deathViolation(); (v != nil) != tt.want {
				t.Errorf("deathViolation = %v, want a violation: %v", v, tt.want)
			}
		})
	}
}
