package machine_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// heldRec is a circuit an operator holds closed until until: generation 3,
// version 7, written at t0, as ForceClosed writes it.
func heldRec(until time.Time) *driver.Record {
	return with(closedRec(0), func(r *driver.Record) { r.Forced, r.OpenUntil = true, until })
}

func TestForceClosed(t *testing.T) {
	now := t0.Add(time.Minute)
	d := 5 * time.Minute
	// held is rec's successor held closed until now+d in the next generation.
	held := func(rec *driver.Record) *driver.Record {
		return with(rec, func(r *driver.Record) {
			r.State, r.Failures, r.Successes, r.Reopens = driver.StateClosed, 0, 0, 0
			r.Generation++
			r.Version++
			r.OpenUntil, r.ProbeToken, r.LeaseUntil = now.Add(d), "", time.Time{}
			r.Forced, r.UpdatedAt = true, now
		})
	}
	tests := []struct {
		name string
		rec  *driver.Record
		want *driver.Record
	}{
		{"no record: created held closed in generation 1", nil, &driver.Record{Name: testName, State: driver.StateClosed,
			Generation: 1, Incarnation: freshID, Version: 1, UpdatedAt: now, OpenUntil: now.Add(d), Forced: true}},
		{"closed with failures: the count is gone, a new generation", closedRec(2), held(closedRec(2))},
		{"open after reopens: closed, the cooldown reset", with(openRec(3, now.Add(time.Hour)), func(r *driver.Record) { r.Reopens = 2 }),
			held(openRec(3, now.Add(time.Hour)))},
		{"forced open: the hold is replaced", with(openRec(3, now.Add(time.Hour)), func(r *driver.Record) { r.Forced = true }),
			held(openRec(3, now.Add(time.Hour)))},
		{"half-open with a probe and a run: the claim and the run are gone",
			with(halfOpenRec(3, tokA, now), func(r *driver.Record) { r.Successes = 2 }), held(halfOpenRec(3, tokA, now))},
		{"held closed already: held for d from now", heldRec(now.Add(time.Hour)), held(heldRec(now.Add(time.Hour)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh, _ := freshIDs()
			got := machine.ForceClosed(tt.rec, testName, now, d, fresh)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ForceClosed =\n  %s\nwant\n  %s", fmtRecord(got), fmtRecord(tt.want))
			}
			if err := got.Check(); err != nil {
				t.Errorf("ForceClosed produced an inconsistent record: %v", err)
			}
			if !machine.Held(got, now) || !machine.Held(got, now.Add(d-1)) || machine.Held(got, now.Add(d)) {
				t.Errorf("Held at now, now+d-1ns, now+d = %v, %v, %v; want true, true, false",
					machine.Held(got, now), machine.Held(got, now.Add(d-1)), machine.Held(got, now.Add(d)))
			}
		})
	}
	t.Run("a probe admitted before cannot settle", func(t *testing.T) {
		fresh, _ := freshIDs()
		rec := machine.ForceClosed(halfOpenRec(3, tokA, now), testName, now, d, fresh)
		g := machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: tokA}
		for _, at := range []time.Time{now, now.Add(d)} {
			if got := machine.Settle(rec, testName, &g, machine.Failure, &pol, machine.At(at), driver.Counts{}); got != nil {
				t.Errorf("Settle at %s = %s, want nil", fmtTime(at), fmtRecord(got))
			}
		}
	})
}

func TestAdmitHeld(t *testing.T) {
	until := t0.Add(time.Hour)
	for _, now := range []time.Time{t0, until.Add(-1), until, until.Add(24 * time.Hour)} {
		fresh, n := freshIDs()
		got := admit(heldRec(until), &pol, machine.At(now), fresh)
		want := machine.Admission{Admitted: true, Grant: machine.Grant{Incarnation: incA, Generation: 3}}
		if !reflect.DeepEqual(got, want) || *n != 0 {
			t.Errorf("Admit at %s = %+v (%d ids), want %+v: admitted, nothing written", fmtTime(now), got, *n, want)
		}
	}
}

// TestSettleHeld covers the outcomes of calls admitted while an operator
// holds the circuit closed: nothing counts until the hold ends; then the
// first settlement stores the circuit plainly closed, counting its outcome.
func TestSettleHeld(t *testing.T) {
	until := t0.Add(time.Hour)
	g := machine.Grant{Incarnation: incA, Generation: 3}
	one := machine.Policy{FailureThreshold: 1, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}
	trips := driver.Counts{Calls: 10, Failures: 10}
	low := driver.Counts{Calls: 10, Failures: 1}
	// plain is heldRec(until)'s successor at now, no longer forced.
	plain := func(now time.Time, f func(*driver.Record)) *driver.Record {
		return with(heldRec(until), func(r *driver.Record) {
			r.Version, r.UpdatedAt, r.Forced, r.OpenUntil = 8, now, false, time.Time{}
			f(r)
		})
	}
	opened := func(now time.Time, failures int) *driver.Record {
		return plain(now, func(r *driver.Record) {
			r.State, r.Failures, r.OpenUntil = driver.StateOpen, failures, now.Add(30*time.Second)
		})
	}
	tests := []struct {
		name string
		g    machine.Grant
		o    machine.Outcome
		p    machine.Policy
		w    driver.Counts
		now  time.Time
		want *driver.Record
	}{
		{"held: a failure at the threshold counts nothing", g, machine.Failure, one, driver.Counts{}, until.Add(-1), nil},
		{"held: a failure that trips the rate counts nothing", g, machine.Failure, rateOnlyPol, trips, t0, nil},
		{"held: a success changes nothing", g, machine.Success, pol, driver.Counts{}, t0, nil},
		{"held: ignored changes nothing", g, machine.Ignored, pol, driver.Counts{}, t0, nil},
		{"ended: a success stores it plainly closed", g, machine.Success, pol, driver.Counts{}, until, plain(until, func(*driver.Record) {})},
		{"ended: a failure counts", g, machine.Failure, pol, driver.Counts{}, until, plain(until, func(r *driver.Record) { r.Failures = 1 })},
		{"ended: a failure at the threshold opens", g, machine.Failure, one, driver.Counts{}, until.Add(time.Hour), opened(until.Add(time.Hour), 1)},
		{"ended: rate only, a failure under the rate stores it plainly closed", g, machine.Failure, rateOnlyPol, low, until,
			plain(until, func(*driver.Record) {})},
		{"ended: rate only, a failure over the rate opens", g, machine.Failure, rateOnlyPol, trips, until, opened(until, 0)},
		{"ended: ignored changes nothing", g, machine.Ignored, pol, driver.Counts{}, until, nil},
		{"stale: admitted before the hold (an earlier generation)", machine.Grant{Incarnation: incA, Generation: 2}, machine.Failure, one,
			driver.Counts{}, until, nil},
		{"stale: a probe", machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: tokA}, machine.Success, pol,
			driver.Counts{}, until, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := machine.Settle(heldRec(until), testName, &tt.g, tt.o, &tt.p, machine.At(tt.now), tt.w)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SettleWindow(%s) at %s =\n  %s\nwant\n  %s", tt.o, fmtTime(tt.now), fmtRecord(got), fmtRecord(tt.want))
			}
			if got != nil {
				if err := got.Check(); err != nil {
					t.Errorf("SettleWindow produced an inconsistent record: %v", err)
				}
			}
		})
	}
}

func TestRecordCheckHeld(t *testing.T) {
	if err := heldRec(t0).Check(); err != nil {
		t.Errorf("held closed: Check() = %v", err)
	}
	bad := map[string]*driver.Record{
		"held closed with failures":          with(heldRec(t0), func(r *driver.Record) { r.Failures = 1 }),
		"held closed with reopens":           with(heldRec(t0), func(r *driver.Record) { r.Reopens = 1 }),
		"held closed with a probe":           with(heldRec(t0), func(r *driver.Record) { r.ProbeToken, r.LeaseUntil = tokA, t0 }),
		"closed with open_until, not forced": with(closedRec(0), func(r *driver.Record) { r.OpenUntil = t0 }),
		"forced half-open, idle":             with(halfOpenRec(3, "", time.Time{}), func(r *driver.Record) { r.Successes, r.Forced = 1, true }),
	}
	for name, rec := range bad {
		if err := rec.Check(); err == nil {
			t.Errorf("%s: Check() = nil, want an error", name)
		}
	}
}
