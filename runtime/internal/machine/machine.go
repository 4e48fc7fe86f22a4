// Package machine is the circuit breaker's state machine: pure functions of
// a circuit's record, a policy, an outcome and a time, with no I/O. The
// Breaker of runtime/circuit is the I/O around them; stores' tests use them
// as their model.
package machine

import (
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// Grant identifies an admitted call: which record, generation and, for a
// half-open probe, which claim it was admitted under. Settle applies a call's
// outcome only while the record still matches its Grant.
type Grant struct {
	// Incarnation and Generation are the record's at admission.
	Incarnation string
	Generation  uint64
	// Probe is true for the half-open probe; Token is its claim.
	Probe bool
	Token string
}

// Admission is what Admit decided.
type Admission struct {
	// Next is the record to store before the call runs, or nil when nothing
	// changes (a closed circuit, or a rejection).
	Next *driver.Record
	// Admitted reports whether the call may run; Grant identifies it.
	Admitted bool
	Grant    Grant
	// For a rejection: the state that rejected the call and when it may
	// admit again (the end of the cooldown, or of the probe's lease), and
	// whether an operator forced the circuit open.
	State  driver.State
	Until  time.Time
	Forced bool
}

// Admit decides whether a call to the circuit whose record is rec (nil when
// none exists) may run under policy p, at the time clk tells, and puts the
// decision in *a; it asks clk only for a record that is not closed. fresh
// returns a new random 32-hex-digit id; Admit calls it only when it claims
// a probe. (The decision is put, not returned: a result this large is
// copied through memory, and that costs the rejection, which makes no
// other call, a third of its time.)
//
//   - no record: the call is admitted as on a closed record of
//     driver.FirstIncarnation and Generation 1 (Fresh), and nothing is
//     written: a circuit gets a record when an outcome changes something;
//   - closed: admitted, nothing changes, also while an operator holds it
//     closed (ForceClosed);
//   - open before OpenUntil: rejected until OpenUntil;
//   - open at or after OpenUntil: this call claims the half-open probe with a
//     fresh token, leased until now+ProbeLease;
//   - half_open with a live lease: rejected until LeaseUntil;
//   - half_open with an expired lease: this call claims the probe anew;
//   - half_open between two probes of a CloseAfter run (no claim): this
//     call claims the next probe.
func Admit(rec *driver.Record, p *Policy, clk *Clock, fresh func() string, a *Admission) {
	*a = Admission{}
	if rec == nil {
		a.Admitted, a.Grant = true, First
		return
	}
	switch rec.State {
	case driver.StateClosed:
		a.Admitted, a.Grant = true, GrantOf(rec)
		return
	case driver.StateOpen:
		if clk.Before(rec.OpenUntil) {
			a.State, a.Until, a.Forced = driver.StateOpen, rec.OpenUntil, rec.Forced
			return
		}
	case driver.StateHalfOpen:
		if clk.Before(rec.LeaseUntil) {
			a.State, a.Until = driver.StateHalfOpen, rec.LeaseUntil
			return
		}
	}
	now := clk.Now()
	next := successor(rec, now)
	next.State = driver.StateHalfOpen
	next.ProbeToken = fresh()
	next.LeaseUntil = now.Add(p.ProbeLease)
	a.Next, a.Admitted = next, true
	a.Grant = Grant{Incarnation: rec.Incarnation, Generation: rec.Generation, Probe: true, Token: next.ProbeToken}
}

// First is the Grant of a call admitted while the circuit has no record:
// the closed record that stands for none (Fresh).
var First = Grant{Incarnation: driver.FirstIncarnation, Generation: 1}

// GrantOf returns the Grant of a call that rec (nil: none) admits closed,
// not as a probe.
func GrantOf(rec *driver.Record) Grant {
	if rec == nil {
		return First
	}
	return Grant{Incarnation: rec.Incarnation, Generation: rec.Generation}
}

// Fresh returns the record that stands for the named circuit while it has
// none: closed, of driver.FirstIncarnation and Generation 1, with no
// failures and Version 0, so that the record made from it is Version 1. It
// is never stored: a circuit with no record has never had an outcome that
// changed anything, or was lost by its store.
func Fresh(name string) *driver.Record {
	return &driver.Record{Name: name, State: driver.StateClosed, Generation: 1, Incarnation: driver.FirstIncarnation}
}

// Settle applies outcome o of the call admitted with g to rec under policy
// p, at the time clk tells, and returns the record to store, or nil when
// nothing changes. w is the circuit's window counts as of this call, this call
// included (see Counts); only a closed-admitted Failure reads it. o is the
// outcome after Policy.Classify.
//
// A nil rec, no record, is the closed record Fresh(name): a Failure admitted
// with First creates the circuit's record.
//
// Nothing changes for a stale call: the record was cleared or remade (rec
// is of another incarnation), the circuit closed again since (another generation),
// the probe's claim was taken over (another token), or a call admitted while
// closed completes while the circuit is open or half-open.
//
// A closed-admitted call while an operator holds the circuit closed (Held)
// changes nothing; once the hold has ended, the first one that settles
// stores the circuit plainly closed, and is then counted as follows.
//
// A closed-admitted call: Failure counts, and opens the circuit until
// now+Cooldown when it is the FailureThreshold-th consecutive one, or when w
// trips the rate rule (Policy.Trips); Success resets the count; Ignored
// changes nothing. With FailureThreshold 0 a Failure that does not trip the
// rate rule changes nothing either.
//
// The probe: Success adds to the run of probe successes, and the
// CloseAfter-th in a row closes the circuit with a zero count, a new
// generation and the cooldown reset; before that the circuit stays half-open
// with no probe in flight, for the next caller to claim. Failure counts and
// reopens it for a cooldown doubled once more (Policy.CooldownAfter);
// Ignored reopens it for the current cooldown without counting, since
// health was not shown. Either ends the run of successes.
//
// Settle asks clk for the time only to date the record it returns, and on a
// forced closed record to tell whether the hold has ended.
func Settle(rec *driver.Record, name string, g *Grant, o Outcome, p *Policy, clk *Clock, w driver.Counts) *driver.Record {
	if rec == nil {
		if *g != First || o != Failure {
			return nil // a success or an ignored call changes nothing on no record
		}
		rec = Fresh(name)
	}
	if rec.Incarnation != g.Incarnation || rec.Generation != g.Generation {
		return nil
	}
	if g.Probe {
		if rec.State != driver.StateHalfOpen || rec.ProbeToken != g.Token {
			return nil
		}
		now := clk.Now()
		next := successor(rec, now)
		switch o {
		case Success:
			next.Successes++
			if next.Successes < p.CloseAfter {
				return next // half-open, awaiting the next probe
			}
			next.State = driver.StateClosed
			next.Failures = 0
			next.Successes = 0
			next.Reopens = 0
			next.Generation++
			next.OpenUntil = time.Time{}
			return next
		case Failure:
			next.Failures = min(next.Failures+1, driver.MaxFailures)
			next.Reopens = min(next.Reopens+1, driver.MaxReopens)
		}
		next.State = driver.StateOpen
		next.Successes = 0
		next.OpenUntil = now.Add(p.CooldownAfter(next.Reopens))
		return next
	}
	if rec.State != driver.StateClosed {
		return nil
	}
	var next *driver.Record // nil until something changes
	if rec.Forced {
		if o == Ignored || clk.Before(rec.OpenUntil) {
			return nil // held closed: nothing counts
		}
		next = successor(rec, clk.Now()) // the hold has ended: plainly closed
		next.OpenUntil = time.Time{}
	}
	switch o {
	case Success:
		if rec.Failures == 0 {
			return next
		}
		next = successor(rec, clk.Now())
		next.Failures = 0
		return next
	case Failure:
		consecutive := p.FailureThreshold > 0
		if !consecutive && !p.Trips(w) {
			return next
		}
		now := clk.Now()
		if next == nil {
			next = successor(rec, now)
		}
		if consecutive {
			next.Failures = min(next.Failures+1, driver.MaxFailures)
		}
		if consecutive && next.Failures >= p.FailureThreshold || p.Trips(w) {
			next.State = driver.StateOpen
			next.OpenUntil = now.Add(p.CooldownAfter(next.Reopens))
		}
		return next
	}
	return nil
}

// ForceOpen returns the record that holds the circuit open, forced, until
// now+d, over rec (nil when none exists: a record of a fresh incarnation
// is created, which no call admitted before can settle against), in place
// of any hold before. A probe in flight loses its
// claim, and calls admitted before settle against an open circuit, so none
// of them changes it; when d ends, the next call claims a half-open probe
// as after any cooldown.
func ForceOpen(rec *driver.Record, name string, now time.Time, d time.Duration, fresh func() string) *driver.Record {
	next := forced(rec, name, now, d, fresh)
	next.State = driver.StateOpen
	return next
}

// ForceClosed returns the record that holds the circuit closed, forced,
// until now+d, over rec (nil when none exists), in place of any hold
// before: a new generation with no failures and the cooldown reset, so that
// no call admitted before changes it and its window starts afresh; a probe
// in flight loses its claim. Until d ends every call is admitted and no
// outcome counts (Held); then the circuit is plainly closed.
func ForceClosed(rec *driver.Record, name string, now time.Time, d time.Duration, fresh func() string) *driver.Record {
	next := forced(rec, name, now, d, fresh)
	if rec != nil {
		next.Generation++
	}
	next.State = driver.StateClosed
	next.Failures = 0
	next.Reopens = 0
	return next
}

// Cleared returns the record Clear leaves over rec (nil: none) for the
// named circuit: closed, with no failures, like no record, but of a fresh
// incarnation, so that no call admitted before the Clear (with First
// included) can settle against it, and its window starts afresh. Its
// version follows rec's.
func Cleared(rec *driver.Record, name string, now time.Time, fresh func() string) *driver.Record {
	next := &driver.Record{Name: name, State: driver.StateClosed, Generation: 1, Incarnation: fresh(), Version: 1, UpdatedAt: now}
	if rec != nil {
		next.Version = rec.Version + 1
	}
	return next
}

// Held reports whether an operator holds rec closed at now: it is a forced
// closed record and its hold has not ended. Every call is admitted and no
// outcome counts.
func Held(rec *driver.Record, now time.Time) bool {
	return rec != nil && rec.State == driver.StateClosed && rec.Forced && now.Before(rec.OpenUntil)
}

// forced returns the successor of rec (or a new record of a fresh
// incarnation when rec is nil) forced until now+d, with no run of probe
// successes; the caller sets its state.
func forced(rec *driver.Record, name string, now time.Time, d time.Duration, fresh func() string) *driver.Record {
	var next *driver.Record
	if rec == nil {
		next = &driver.Record{Name: name, Generation: 1, Incarnation: fresh(), Version: 1, UpdatedAt: now}
	} else {
		next = successor(rec, now)
	}
	next.Successes = 0
	next.OpenUntil = now.Add(d)
	next.Forced = true
	return next
}

// successor returns a copy of r with the next version, no probe claim, not
// forced, and now as its update time.
func successor(r *driver.Record, now time.Time) *driver.Record {
	next := *r
	next.Version++
	next.ProbeToken = ""
	next.LeaseUntil = time.Time{}
	next.Forced = false
	next.UpdatedAt = now
	return &next
}

// Standing is what Admit decides on a record at every time before Until,
// the same for every call, with no clock, no claim and nothing to write: the
// one shortcut of the hot path. While the record is still the circuit's,
// the Breaker may take the decision again without the machine:
//
//   - an admission (Admitted, with Grant) stands at every time (Until is
//     zero); Quiet adds that a Success of the call leaves the record as it
//     is, whatever the policy, the window and the time (Settle returns nil
//     and reads no clock), so a quiet call has nothing to decide after it
//     either. The rate rule still counts it in its window;
//   - a rejection (State, Forced) stands until Until: the end of the
//     cooldown, or of the probe's lease. At Until Admit claims a probe, so
//     the Breaker must know Until has not come without reading a clock (a
//     timer set for it, which never fires early).
type Standing struct {
	Admitted bool
	Grant    Grant
	Quiet    bool
	State    driver.State
	Until    time.Time
	Forced   bool
}

// StandingOf returns the standing decision on rec (nil: none), and false
// when there is none: a half-open record with no claim (the next call
// claims the probe), or a closed record an operator holds closed, whose
// hold ends at a time no standing admission marks. It reads no clock: a
// rejection stands only until its Until, and past it (a cooldown over, a
// lease lapsed) Admit decides by the clock.
//
//	rec                        standing
//	none                       admitted (First), quiet
//	closed, no failures        admitted, quiet
//	closed, failures counted   admitted
//	open until t               rejected until t (forced when an operator holds it open)
//	half-open, leased until t  rejected until t
func StandingOf(rec *driver.Record) (Standing, bool) {
	switch {
	case rec == nil:
		return Standing{Admitted: true, Grant: First, Quiet: true}, true
	case rec.State == driver.StateClosed && !rec.Forced:
		return Standing{Admitted: true, Grant: GrantOf(rec), Quiet: rec.Failures == 0}, true
	case rec.State == driver.StateOpen:
		return Standing{State: driver.StateOpen, Until: rec.OpenUntil, Forced: rec.Forced}, true
	case rec.State == driver.StateHalfOpen && !rec.LeaseUntil.IsZero():
		return Standing{State: driver.StateHalfOpen, Until: rec.LeaseUntil}, true
	}
	return Standing{}, false
}

// StateAt returns the state of rec (not nil) as the decision of a call
// now by clk would read it, without deciding: an open record past its
// cooldown or hold reads half-open, whose next call claims the probe;
// a half-open record is probing while a claim's lease lasts; an
// operator's hold is forced until it ends. It asks clk for the time only
// where the reading depends on it. Snapshot reports it.
func StateAt(rec *driver.Record, clk *Clock) (state driver.State, probing, forced bool) {
	switch rec.State {
	case driver.StateOpen:
		if !clk.Before(rec.OpenUntil) {
			return driver.StateHalfOpen, false, false
		}
		return driver.StateOpen, false, rec.Forced
	case driver.StateHalfOpen:
		return driver.StateHalfOpen, !rec.LeaseUntil.IsZero() && clk.Before(rec.LeaseUntil), false
	}
	return rec.State, false, rec.Forced && clk.Before(rec.OpenUntil)
}

// Counted reports whether the rate rule's window counts the outcome of the
// call of g, settling against rec (nil: none): rec is the closed record that
// admitted it, not as a probe, and no operator holds it closed. It asks clk
// for the time only on a forced record.
func Counted(rec *driver.Record, g *Grant, clk *Clock) bool {
	if g.Probe {
		return false
	}
	if rec == nil {
		return *g == First
	}
	return rec.State == driver.StateClosed && rec.Generation == g.Generation && rec.Incarnation == g.Incarnation &&
		!(rec.Forced && clk.Before(rec.OpenUntil))
}
