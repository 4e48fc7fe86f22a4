package machine_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

const (
	testName = "billing-api"
	incA     = "0123456789abcdef0123456789abcdef"
	incB     = "fedcba9876543210fedcba9876543210"
	tokA     = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	tokB     = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	freshID  = "cccccccccccccccccccccccccccccccc"
)

// pol is the policy of most cases: 3 failures, 30s cooldown, 10s lease.
var pol = machine.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}

// The record every case starts from lives in generation 3, version 7,
// last written at t0.
func closedRec(failures int) *driver.Record {
	return &driver.Record{Name: testName, State: driver.StateClosed, Failures: failures,
		Generation: 3, Incarnation: incA, Version: 7, UpdatedAt: t0}
}

func openRec(failures int, until time.Time) *driver.Record {
	r := closedRec(failures)
	r.State = driver.StateOpen
	r.OpenUntil = until
	return r
}

// halfOpenRec is a probe claimed at t0 under pol, after a cooldown that ended
// at t0.
func halfOpenRec(failures int, token string, leaseUntil time.Time) *driver.Record {
	r := openRec(failures, t0)
	r.State = driver.StateHalfOpen
	r.ProbeToken = token
	r.LeaseUntil = leaseUntil
	return r
}

// with returns a copy of r changed by f.
func with(r *driver.Record, f func(*driver.Record)) *driver.Record {
	cp := *r
	f(&cp)
	return &cp
}

// freshIDs returns a fresh-id source that hands out ids in turn and counts
// how often it was called.
func freshIDs(ids ...string) (fresh func() string, calls *int) {
	calls = new(int)
	return func() string {
		id := freshID
		if *calls < len(ids) {
			id = ids[*calls]
		}
		*calls++
		return id
	}, calls
}

func TestAdmit(t *testing.T) {
	openUntil := t0.Add(30 * time.Second)
	lease := t0.Add(10 * time.Second)
	tests := []struct {
		name       string
		rec        *driver.Record
		p          machine.Policy
		now        time.Time
		want       machine.Admission
		wantFreshN int
	}{
		{
			name: "no record: admitted as on the first record, nothing written",
			rec:  nil, p: pol, now: t0,
			want: machine.Admission{Admitted: true, Grant: machine.First},
		},
		{
			name: "closed: admitted, nothing written",
			rec:  closedRec(2), p: pol, now: t0.Add(time.Hour),
			want: machine.Admission{Admitted: true, Grant: machine.Grant{Incarnation: incA, Generation: 3}},
		},
		{
			name: "open, just before OpenUntil: rejected until OpenUntil",
			rec:  openRec(3, openUntil), p: pol, now: openUntil.Add(-time.Nanosecond),
			want: machine.Admission{State: driver.StateOpen, Until: openUntil},
		},
		{
			name: "open, long before OpenUntil: rejected until OpenUntil",
			rec:  openRec(3, openUntil), p: pol, now: t0,
			want: machine.Admission{State: driver.StateOpen, Until: openUntil},
		},
		{
			name: "open, at OpenUntil: claims the probe with a fresh token and lease",
			rec:  openRec(3, openUntil), p: pol, now: openUntil,
			want: machine.Admission{
				Next: with(openRec(3, openUntil), func(r *driver.Record) {
					r.State = driver.StateHalfOpen
					r.ProbeToken = freshID
					r.LeaseUntil = openUntil.Add(10 * time.Second)
					r.Version = 8
					r.UpdatedAt = openUntil
				}),
				Admitted: true,
				Grant:    machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: freshID},
			},
			wantFreshN: 1,
		},
		{
			name: "open, after OpenUntil: claims the probe, lease from now",
			rec:  openRec(3, openUntil), p: pol, now: openUntil.Add(time.Hour),
			want: machine.Admission{
				Next: with(openRec(3, openUntil), func(r *driver.Record) {
					r.State = driver.StateHalfOpen
					r.ProbeToken = freshID
					r.LeaseUntil = openUntil.Add(time.Hour + 10*time.Second)
					r.Version = 8
					r.UpdatedAt = openUntil.Add(time.Hour)
				}),
				Admitted: true,
				Grant:    machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: freshID},
			},
			wantFreshN: 1,
		},
		{
			name: "half_open, live lease: rejected until LeaseUntil",
			rec:  halfOpenRec(3, tokA, lease), p: pol, now: lease.Add(-time.Nanosecond),
			want: machine.Admission{State: driver.StateHalfOpen, Until: lease},
		},
		{
			name: "half_open, lease expired exactly now: claims anew with a new token",
			rec:  halfOpenRec(3, tokA, lease), p: pol, now: lease,
			want: machine.Admission{
				Next: with(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
					r.ProbeToken = freshID
					r.LeaseUntil = lease.Add(10 * time.Second)
					r.Version = 8
					r.UpdatedAt = lease
				}),
				Admitted: true,
				Grant:    machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: freshID},
			},
			wantFreshN: 1,
		},
		{
			name: "half_open, lease long expired: claims anew with a new token",
			rec:  halfOpenRec(3, tokA, lease), p: pol, now: lease.Add(time.Minute),
			want: machine.Admission{
				Next: with(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
					r.ProbeToken = freshID
					r.LeaseUntil = lease.Add(time.Minute + 10*time.Second)
					r.Version = 8
					r.UpdatedAt = lease.Add(time.Minute)
				}),
				Admitted: true,
				Grant:    machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: freshID},
			},
			wantFreshN: 1,
		},

		// Policy changes under a recorded deadline: the deadline stands, the
		// new policy governs the transition the call makes.
		{
			name: "policy change: shorter cooldown does not end a recorded cooldown early",
			rec:  openRec(3, openUntil),
			p:    machine.Policy{FailureThreshold: 3, Cooldown: time.Second, ProbeLease: 10 * time.Second},
			now:  t0.Add(5 * time.Second),
			want: machine.Admission{State: driver.StateOpen, Until: openUntil},
		},
		{
			name: "policy change: longer cooldown does not extend a recorded cooldown",
			rec:  openRec(3, openUntil),
			p:    machine.Policy{FailureThreshold: 3, Cooldown: 24 * time.Hour, ProbeLease: 10 * time.Second},
			now:  openUntil,
			want: machine.Admission{
				Next: with(openRec(3, openUntil), func(r *driver.Record) {
					r.State = driver.StateHalfOpen
					r.ProbeToken = freshID
					r.LeaseUntil = openUntil.Add(10 * time.Second)
					r.Version = 8
					r.UpdatedAt = openUntil
				}),
				Admitted: true,
				Grant:    machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: freshID},
			},
			wantFreshN: 1,
		},
		{
			name: "policy change: shorter lease does not end a live recorded lease",
			rec:  halfOpenRec(3, tokA, lease),
			p:    machine.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeLease: time.Second},
			now:  t0.Add(5 * time.Second),
			want: machine.Admission{State: driver.StateHalfOpen, Until: lease},
		},
		{
			name: "policy change: new claim after the recorded lease takes the new policy's lease",
			rec:  halfOpenRec(3, tokA, lease),
			p:    machine.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeLease: time.Hour},
			now:  lease,
			want: machine.Admission{
				Next: with(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
					r.ProbeToken = freshID
					r.LeaseUntil = lease.Add(time.Hour)
					r.Version = 8
					r.UpdatedAt = lease
				}),
				Admitted: true,
				Grant:    machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: freshID},
			},
			wantFreshN: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before driver.Record
			if tt.rec != nil {
				before = *tt.rec
			}
			fresh, calls := freshIDs() // always freshID
			got := admit(tt.rec, &tt.p, machine.At(tt.now), fresh)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Admit =\n  %s\nwant\n  %s", fmtAdmission(got), fmtAdmission(tt.want))
			}
			if *calls != tt.wantFreshN {
				t.Errorf("fresh called %d times, want %d", *calls, tt.wantFreshN)
			}
			if tt.rec != nil && !reflect.DeepEqual(*tt.rec, before) {
				t.Errorf("Admit modified its input record:\n  %+v\nwas\n  %+v", *tt.rec, before)
			}
			if got.Next != nil {
				if err := got.Next.Check(); err != nil {
					t.Errorf("Admit produced an inconsistent record: %v", err)
				}
				if got.Next == tt.rec {
					t.Error("Admit returned its input record as Next")
				}
			}
		})
	}
}

// TestAdmitUsesFreshForEveryClaim checks that each claim takes its token from
// fresh, so successive claims never share one.
func TestAdmitUsesFreshForEveryClaim(t *testing.T) {
	rec := halfOpenRec(3, tokA, t0.Add(10*time.Second))
	fresh, calls := freshIDs("11111111111111111111111111111111", "22222222222222222222222222222222")
	now := t0.Add(10 * time.Second)
	a1 := admit(rec, &pol, machine.At(now), fresh)
	a2 := admit(a1.Next, &pol, machine.At(a1.Next.LeaseUntil), fresh)
	if *calls != 2 || a1.Grant.Token == a2.Grant.Token || a1.Grant.Token == tokA {
		t.Fatalf("claims took tokens %q then %q (fresh called %d times); want two distinct fresh tokens",
			a1.Grant.Token, a2.Grant.Token, *calls)
	}
	if a2.Next.ProbeToken != a2.Grant.Token || a2.Next.Version != rec.Version+2 {
		t.Errorf("second claim: record token %q version %d, grant token %q", a2.Next.ProbeToken, a2.Next.Version, a2.Grant.Token)
	}
}

func fmtAdmission(a machine.Admission) string {
	next := "<nil>"
	if a.Next != nil {
		next = fmtRecord(a.Next)
	}
	return fmt.Sprintf("Admitted=%v Grant=%+v State=%s Until=%s Next=%s", a.Admitted, a.Grant, a.State, fmtTime(a.Until), next)
}

func TestSettle(t *testing.T) {
	now := t0.Add(time.Minute)
	closedGrant := machine.Grant{Incarnation: incA, Generation: 3}
	probeGrant := machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: tokA}
	lease := t0.Add(10 * time.Second)
	// next is rec's successor as Settle must build it: the next version,
	// written now, with no probe claim, then changed by f.
	next := func(rec *driver.Record, f func(*driver.Record)) *driver.Record {
		return with(rec, func(r *driver.Record) {
			r.Version++
			r.UpdatedAt = now
			r.ProbeToken = ""
			r.LeaseUntil = time.Time{}
			f(r)
		})
	}
	tests := []struct {
		name string
		rec  *driver.Record
		g    machine.Grant
		o    machine.Outcome
		p    machine.Policy
		want *driver.Record // nil: no change
	}{
		// Calls admitted on no record (machine.First).
		{
			name: "no record: a failure creates the first record, counted",
			rec:  nil, g: machine.First, o: machine.Failure, p: pol,
			want: &driver.Record{Name: testName, State: driver.StateClosed, Failures: 1, Generation: 1,
				Incarnation: driver.FirstIncarnation, Version: 1, UpdatedAt: now},
		},
		{
			name: "no record: a failure at a threshold of 1 creates the first record, open",
			rec:  nil, g: machine.First, o: machine.Failure, p: machine.Policy{FailureThreshold: 1, Cooldown: 30 * time.Second, ProbeLease: time.Second},
			want: &driver.Record{Name: testName, State: driver.StateOpen, Failures: 1, Generation: 1,
				Incarnation: driver.FirstIncarnation, Version: 1, OpenUntil: now.Add(30 * time.Second), UpdatedAt: now},
		},
		{
			name: "no record: a success changes nothing",
			rec:  nil, g: machine.First, o: machine.Success, p: pol,
		},
		{
			name: "no record: an ignored call changes nothing",
			rec:  nil, g: machine.First, o: machine.Ignored, p: pol,
		},
		{
			name: "no record: a call admitted on a record since cleared changes nothing",
			rec:  nil, g: closedGrant, o: machine.Failure, p: pol,
		},
		{
			name: "first record: a call admitted on no record counts against it",
			rec:  with(closedRec(1), func(r *driver.Record) { r.Incarnation = driver.FirstIncarnation; r.Generation = 1 }), g: machine.First, o: machine.Failure, p: pol,
			want: next(with(closedRec(1), func(r *driver.Record) { r.Incarnation = driver.FirstIncarnation; r.Generation = 1 }), func(r *driver.Record) { r.Failures = 2 }),
		},
		{
			name: "cleared record: a call admitted on no record changes nothing",
			rec:  machine.Cleared(nil, testName, t0, func() string { return incB }), g: machine.First, o: machine.Failure, p: pol,
		},
		// Closed-admitted calls.
		{
			name: "closed: failure below the threshold counts",
			rec:  closedRec(0), g: closedGrant, o: machine.Failure, p: pol,
			want: next(closedRec(0), func(r *driver.Record) { r.Failures = 1 }),
		},
		{
			name: "closed: second failure still counts, stays closed",
			rec:  closedRec(1), g: closedGrant, o: machine.Failure, p: pol,
			want: next(closedRec(1), func(r *driver.Record) { r.Failures = 2 }),
		},
		{
			name: "closed: threshold-th failure opens until now+Cooldown",
			rec:  closedRec(2), g: closedGrant, o: machine.Failure, p: pol,
			want: next(closedRec(2), func(r *driver.Record) {
				r.Failures = 3
				r.State = driver.StateOpen
				r.OpenUntil = now.Add(30 * time.Second)
			}),
		},
		{
			name: "closed: threshold 1 opens on the first failure",
			rec:  closedRec(0), g: closedGrant, o: machine.Failure,
			p: machine.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second},
			want: next(closedRec(0), func(r *driver.Record) {
				r.Failures = 1
				r.State = driver.StateOpen
				r.OpenUntil = now.Add(time.Second)
			}),
		},
		{
			name: "closed: threshold 1000 opens at the 1000th failure",
			rec:  closedRec(999), g: closedGrant, o: machine.Failure,
			p: machine.Policy{FailureThreshold: 1000, Cooldown: time.Minute, ProbeLease: time.Second},
			want: next(closedRec(999), func(r *driver.Record) {
				r.Failures = 1000
				r.State = driver.StateOpen
				r.OpenUntil = now.Add(time.Minute)
			}),
		},
		{
			name: "closed: success resets the count",
			rec:  closedRec(2), g: closedGrant, o: machine.Success, p: pol,
			want: next(closedRec(2), func(r *driver.Record) { r.Failures = 0 }),
		},
		{
			name: "closed: success with a zero count writes nothing",
			rec:  closedRec(0), g: closedGrant, o: machine.Success, p: pol,
			want: nil,
		},
		{
			name: "closed: ignored changes nothing",
			rec:  closedRec(2), g: closedGrant, o: machine.Ignored, p: pol,
			want: nil,
		},

		// The half-open probe.
		{
			name: "probe: success closes with a zero count and a new generation",
			rec:  halfOpenRec(3, tokA, lease), g: probeGrant, o: machine.Success, p: pol,
			want: next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State = driver.StateClosed
				r.Failures = 0
				r.Generation = 4
				r.OpenUntil = time.Time{}
			}),
		},
		{
			name: "probe: failure reopens for Cooldown and counts",
			rec:  halfOpenRec(3, tokA, lease), g: probeGrant, o: machine.Failure, p: pol,
			want: next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State = driver.StateOpen
				r.Failures = 4
				r.Reopens = 1 // MaxCooldown 0: the cooldown does not grow
				r.OpenUntil = now.Add(30 * time.Second)
			}),
		},
		{
			name: "probe: ignored reopens for Cooldown without counting",
			rec:  halfOpenRec(3, tokA, lease), g: probeGrant, o: machine.Ignored, p: pol,
			want: next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State = driver.StateOpen
				r.Failures = 3
				r.OpenUntil = now.Add(30 * time.Second)
			}),
		},
		{
			name: "probe: settling after its lease expired, not taken over, still counts",
			rec:  halfOpenRec(3, tokA, t0.Add(time.Second)), g: probeGrant, o: machine.Success, p: pol,
			want: next(halfOpenRec(3, tokA, t0.Add(time.Second)), func(r *driver.Record) {
				r.State = driver.StateClosed
				r.Failures = 0
				r.Generation = 4
				r.OpenUntil = time.Time{}
			}),
		},

		// Stale settlements change nothing.
		{name: "stale: record cleared (nil), closed failure", rec: nil, g: closedGrant, o: machine.Failure, p: pol},
		{name: "stale: record cleared (nil), closed success", rec: nil, g: closedGrant, o: machine.Success, p: pol},
		{name: "stale: record cleared (nil), probe success", rec: nil, g: probeGrant, o: machine.Success, p: pol},
		{
			name: "stale: record cleared and recreated (other incarnation), closed failure",
			rec:  with(closedRec(2), func(r *driver.Record) { r.Incarnation = incB }), g: closedGrant, o: machine.Failure, p: pol,
		},
		{
			name: "stale: record cleared and recreated (other incarnation), closed success",
			rec:  with(closedRec(2), func(r *driver.Record) { r.Incarnation = incB }), g: closedGrant, o: machine.Success, p: pol,
		},
		{
			name: "stale: record cleared and recreated (other incarnation), probe with the same token",
			rec:  with(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Incarnation = incB }), g: probeGrant, o: machine.Success, p: pol,
		},
		{
			name: "stale: admitted in an earlier generation, fails after recovery",
			rec:  with(closedRec(0), func(r *driver.Record) { r.Generation = 4 }), g: closedGrant, o: machine.Failure, p: pol,
		},
		{
			name: "stale: admitted in an earlier generation, succeeds after recovery",
			rec:  with(closedRec(2), func(r *driver.Record) { r.Generation = 4 }), g: closedGrant, o: machine.Success, p: pol,
		},
		{
			name: "stale: admitted in an earlier generation, completes while open again",
			rec:  with(openRec(3, now.Add(time.Second)), func(r *driver.Record) { r.Generation = 4 }), g: closedGrant, o: machine.Failure, p: pol,
		},
		{
			name: "stale: probe from an earlier generation",
			rec:  with(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Generation = 4 }), g: probeGrant, o: machine.Failure, p: pol,
		},
		{
			name: "stale: probe whose token was taken over, success",
			rec:  halfOpenRec(3, tokB, now.Add(time.Second)), g: probeGrant, o: machine.Success, p: pol,
		},
		{
			name: "stale: probe whose token was taken over, failure",
			rec:  halfOpenRec(3, tokB, now.Add(time.Second)), g: probeGrant, o: machine.Failure, p: pol,
		},
		{
			name: "stale: probe whose token was taken over, ignored",
			rec:  halfOpenRec(3, tokB, now.Add(time.Second)), g: probeGrant, o: machine.Ignored, p: pol,
		},
		{
			name: "stale: probe settling twice, the circuit already reopened",
			rec:  openRec(4, now.Add(time.Second)), g: probeGrant, o: machine.Failure, p: pol,
		},
		{
			name: "stale: probe settling against a closed record of its generation",
			rec:  closedRec(0), g: probeGrant, o: machine.Success, p: pol,
		},
		{
			name: "stale: closed-admitted failure completes while open",
			rec:  openRec(3, now.Add(time.Second)), g: closedGrant, o: machine.Failure, p: pol,
		},
		{
			name: "stale: closed-admitted success completes while open",
			rec:  openRec(3, now.Add(time.Second)), g: closedGrant, o: machine.Success, p: pol,
		},
		{
			name: "stale: closed-admitted failure completes while open past its cooldown",
			rec:  openRec(3, t0), g: closedGrant, o: machine.Failure, p: pol,
		},
		{
			name: "stale: closed-admitted failure completes while half_open",
			rec:  halfOpenRec(3, tokA, now.Add(time.Second)), g: closedGrant, o: machine.Failure, p: pol,
		},
		{
			name: "stale: closed-admitted success completes while half_open",
			rec:  halfOpenRec(3, tokA, now.Add(time.Second)), g: closedGrant, o: machine.Success, p: pol,
		},

		// The settling call's policy governs its transition.
		{
			name: "policy change: lower threshold opens sooner",
			rec:  closedRec(2), g: closedGrant, o: machine.Failure,
			p: machine.Policy{FailureThreshold: 2, Cooldown: time.Hour, ProbeLease: time.Second},
			want: next(closedRec(2), func(r *driver.Record) {
				r.Failures = 3
				r.State = driver.StateOpen
				r.OpenUntil = now.Add(time.Hour)
			}),
		},
		{
			name: "policy change: threshold already below the count opens on the next failure",
			rec:  closedRec(4), g: closedGrant, o: machine.Failure,
			p: machine.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second},
			want: next(closedRec(4), func(r *driver.Record) {
				r.Failures = 5
				r.State = driver.StateOpen
				r.OpenUntil = now.Add(time.Second)
			}),
		},
		{
			name: "policy change: higher threshold keeps counting closed",
			rec:  closedRec(2), g: closedGrant, o: machine.Failure,
			p:    machine.Policy{FailureThreshold: 10, Cooldown: time.Hour, ProbeLease: time.Second},
			want: next(closedRec(2), func(r *driver.Record) { r.Failures = 3 }),
		},
		{
			name: "policy change: probe failure reopens for the new cooldown",
			rec:  halfOpenRec(3, tokA, lease), g: probeGrant, o: machine.Failure,
			p: machine.Policy{FailureThreshold: 3, Cooldown: 2 * time.Hour, ProbeLease: time.Second},
			want: next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State = driver.StateOpen
				r.Failures = 4
				r.Reopens = 1
				r.OpenUntil = now.Add(2 * time.Hour)
			}),
		},
		{
			name: "policy change: probe ignored reopens for the new cooldown",
			rec:  halfOpenRec(3, tokA, lease), g: probeGrant, o: machine.Ignored,
			p: machine.Policy{FailureThreshold: 3, Cooldown: time.Second, ProbeLease: time.Second},
			want: next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State = driver.StateOpen
				r.OpenUntil = now.Add(time.Second)
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before driver.Record
			if tt.rec != nil {
				before = *tt.rec
			}
			got := machine.Settle(tt.rec, testName, &tt.g, tt.o, &tt.p, machine.At(now), driver.Counts{})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Settle(%s) =\n  %s\nwant\n  %s", tt.o, fmtRecord(got), fmtRecord(tt.want))
			}
			// Whether anything changes does not depend on the time.
			for _, other := range []time.Time{t0, now.Add(48 * time.Hour)} {
				if changed := machine.Settle(tt.rec, testName, &tt.g, tt.o, &tt.p, machine.At(other), driver.Counts{}) != nil; changed != (tt.want != nil) {
					t.Errorf("at %s Settle changes the record: %v; at now: %v", fmtTime(other), changed, tt.want != nil)
				}
			}
			if tt.rec != nil && !reflect.DeepEqual(*tt.rec, before) {
				t.Errorf("Settle modified its input record:\n  %+v\nwas\n  %+v", *tt.rec, before)
			}
			if got != nil {
				if err := got.Check(); err != nil {
					t.Errorf("Settle produced an inconsistent record: %v", err)
				}
				if got == tt.rec {
					t.Error("Settle returned its input record")
				}
			}
		})
	}
}

// TestMachineEpisode drives Admit and Settle through a whole life: create,
// count to open, reject, probe failure, probe success, and an old call that
// completes after recovery.
func TestMachineEpisode(t *testing.T) {
	fresh, _ := freshIDs(tokA, tokB)
	now := t0
	var rec *driver.Record
	admit := func() machine.Admission {
		t.Helper()
		a := admit(rec, &pol, machine.At(now), fresh)
		if a.Next != nil {
			rec = a.Next
		}
		return a
	}
	settle := func(g machine.Grant, o machine.Outcome) {
		t.Helper()
		if next := machine.Settle(rec, testName, &g, o, &pol, machine.At(now), driver.Counts{}); next != nil {
			rec = next
		}
	}

	first := admit()
	if !first.Admitted || first.Grant != machine.First || rec != nil {
		t.Fatalf("first admission: %s, record %s; want admitted as First, nothing written", fmtAdmission(first), fmtRecord(rec))
	}
	old := first.Grant // completes much later
	for i := range 3 {
		a := admit()
		if !a.Admitted || a.Grant.Probe {
			t.Fatalf("call %d not admitted as closed: %s", i, fmtAdmission(a))
		}
		settle(a.Grant, machine.Failure)
	}
	if rec.State != driver.StateOpen || rec.OpenUntil != t0.Add(30*time.Second) {
		t.Fatalf("after 3 failures: %s", fmtRecord(rec))
	}
	now = now.Add(29 * time.Second)
	if a := admit(); a.Admitted || a.State != driver.StateOpen {
		t.Fatalf("during cooldown: %s", fmtAdmission(a))
	}
	now = now.Add(time.Second)
	p1 := admit()
	if !p1.Admitted || !p1.Grant.Probe || p1.Grant.Token != tokA {
		t.Fatalf("after cooldown: %s", fmtAdmission(p1))
	}
	settle(p1.Grant, machine.Failure)
	if rec.State != driver.StateOpen || rec.Failures != 4 || rec.OpenUntil != now.Add(30*time.Second) {
		t.Fatalf("after failed probe: %s", fmtRecord(rec))
	}
	now = rec.OpenUntil
	p2 := admit()
	if !p2.Grant.Probe || p2.Grant.Token != tokB {
		t.Fatalf("second probe: %s", fmtAdmission(p2))
	}
	settle(p1.Grant, machine.Success) // the first probe, late: stale
	if rec.State != driver.StateHalfOpen {
		t.Fatalf("a stale probe settled: %s", fmtRecord(rec))
	}
	settle(p2.Grant, machine.Success)
	if rec.State != driver.StateClosed || rec.Failures != 0 || rec.Generation != 2 {
		t.Fatalf("after successful probe: %s", fmtRecord(rec))
	}
	settle(old, machine.Failure) // admitted in generation 1
	if rec.Failures != 0 {
		t.Fatalf("a call from generation 1 counted after recovery: %s", fmtRecord(rec))
	}
}

func TestRecordCheck(t *testing.T) {
	good := []struct {
		name string
		rec  *driver.Record
	}{
		{"closed", closedRec(0)},
		{"closed with failures", closedRec(999)},
		{"closed with max failures", closedRec(driver.MaxFailures)},
		{"open", openRec(3, t0.Add(time.Second))},
		{"half_open", halfOpenRec(3, tokA, t0.Add(time.Second))},
		{"half_open without open_until", with(halfOpenRec(3, tokA, t0), func(r *driver.Record) { r.OpenUntil = time.Time{} })},
	}
	for _, tt := range good {
		t.Run("consistent "+tt.name, func(t *testing.T) {
			if err := tt.rec.Check(); err != nil {
				t.Errorf("Check() = %v, want nil", err)
			}
		})
	}
	bad := []struct {
		name string
		rec  *driver.Record
	}{
		{"empty name", with(closedRec(0), func(r *driver.Record) { r.Name = "" })},
		{"invalid name", with(closedRec(0), func(r *driver.Record) { r.Name = "../etc" })},
		{"negative failures", closedRec(-1)},
		{"failures above the maximum", closedRec(driver.MaxFailures + 1)},
		{"generation 0", with(closedRec(0), func(r *driver.Record) { r.Generation = 0 })},
		{"version 0", with(closedRec(0), func(r *driver.Record) { r.Version = 0 })},
		{"empty incarnation", with(closedRec(0), func(r *driver.Record) { r.Incarnation = "" })},
		{"short incarnation", with(closedRec(0), func(r *driver.Record) { r.Incarnation = incA[:31] })},
		{"long incarnation", with(closedRec(0), func(r *driver.Record) { r.Incarnation = incA + "0" })},
		{"upper-case incarnation", with(closedRec(0), func(r *driver.Record) { r.Incarnation = "0123456789ABCDEF0123456789abcdef" })},
		{"non-hex incarnation", with(closedRec(0), func(r *driver.Record) { r.Incarnation = "g123456789abcdef0123456789abcdef" })},
		{"missing updated_at", with(closedRec(0), func(r *driver.Record) { r.UpdatedAt = time.Time{} })},
		{"closed with open_until", with(closedRec(0), func(r *driver.Record) { r.OpenUntil = t0 })},
		{"closed with a probe token", with(closedRec(0), func(r *driver.Record) { r.ProbeToken = tokA })},
		{"closed with a lease", with(closedRec(0), func(r *driver.Record) { r.LeaseUntil = t0 })},
		{"open without open_until", with(openRec(3, t0), func(r *driver.Record) { r.OpenUntil = time.Time{} })},
		{"open with a probe token", with(openRec(3, t0), func(r *driver.Record) { r.ProbeToken = tokA })},
		{"open with a lease", with(openRec(3, t0), func(r *driver.Record) { r.LeaseUntil = t0 })},
		{"half_open without a token", with(halfOpenRec(3, tokA, t0), func(r *driver.Record) { r.ProbeToken = "" })},
		{"half_open without a lease", with(halfOpenRec(3, tokA, t0), func(r *driver.Record) { r.LeaseUntil = time.Time{} })},
		{"unknown state", with(closedRec(0), func(r *driver.Record) { r.State = 3 })},
		{"unknown state 255", with(openRec(3, t0), func(r *driver.Record) { r.State = 255 })},
	}
	for _, tt := range bad {
		t.Run("inconsistent "+tt.name, func(t *testing.T) {
			if err := tt.rec.Check(); err == nil {
				t.Errorf("Check() = nil for %s, want an error", fmtRecord(tt.rec))
			}
		})
	}
}

func TestSameRevision(t *testing.T) {
	a := closedRec(0)
	tests := []struct {
		name string
		x, y *driver.Record
		want bool
	}{
		{"both absent", nil, nil, true},
		{"absent and present", nil, a, false},
		{"present and absent", a, nil, false},
		{"same record", a, a, true},
		{"same incarnation and version, other fields differ", a, openRec(3, t0), true},
		{"other version", a, with(a, func(r *driver.Record) { r.Version++ }), false},
		{"other incarnation", a, with(a, func(r *driver.Record) { r.Incarnation = incB }), false},
		{"other incarnation and version", a, with(a, func(r *driver.Record) { r.Incarnation = incB; r.Version = 1 }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := driver.SameRevision(tt.x, tt.y); got != tt.want {
				t.Errorf("SameRevision = %v, want %v", got, tt.want)
			}
			if got := driver.SameRevision(tt.y, tt.x); got != tt.want {
				t.Errorf("SameRevision (swapped) = %v, want %v", got, tt.want)
			}
		})
	}
}

func fmtRecord(r *driver.Record) string {
	if r == nil {
		return "<nil>"
	}
	return fmt.Sprintf("{%s %s failures=%d gen=%d inc=%s v=%d open_until=%s token=%q lease_until=%s updated=%s successes=%d reopens=%d forced=%t}",
		r.Name, r.State, r.Failures, r.Generation, r.Incarnation, r.Version,
		fmtTime(r.OpenUntil), r.ProbeToken, fmtTime(r.LeaseUntil), fmtTime(r.UpdatedAt), r.Successes, r.Reopens, r.Forced)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return "t0+" + t.Sub(t0).String()
}

// t0 is the fixed start of every test clock.
var t0 = time.Date(2030, time.January, 2, 3, 4, 5, 0, time.UTC)

// TestStanding: the standing decision is Admit's, at every time before
// its Until, with no clock read for an admission; a quiet admission's
// Success changes nothing under any policy, time and window, reading no
// clock, and a loud one's does; at Until a rejection gives way to a claim;
// and there is none where Admit would claim now.
func TestStanding(t *testing.T) {
	rate := machine.Policy{FailureRate: 0.5, MinCalls: 1, Window: time.Minute, Cooldown: time.Minute, ProbeLease: time.Second}
	until := t0.Add(time.Hour)
	forcedOpen := with(openRec(0, until), func(r *driver.Record) { r.Forced = true })
	for _, c := range []struct {
		name string
		rec  *driver.Record
		want machine.Standing
		ok   bool
	}{
		{"no record", nil, machine.Standing{Admitted: true, Grant: machine.First, Quiet: true}, true},
		{"closed, no failures", closedRec(0), machine.Standing{Admitted: true, Grant: machine.Grant{Incarnation: incA, Generation: 3}, Quiet: true}, true},
		{"closed, failures counted", closedRec(2), machine.Standing{Admitted: true, Grant: machine.Grant{Incarnation: incA, Generation: 3}}, true},
		{"open", openRec(0, until), machine.Standing{State: driver.StateOpen, Until: until}, true},
		{"forced open", forcedOpen, machine.Standing{State: driver.StateOpen, Until: until, Forced: true}, true},
		{"half-open, leased", halfOpenRec(0, tokA, until), machine.Standing{State: driver.StateHalfOpen, Until: until}, true},
		{"half-open, between probes", with(halfOpenRec(0, tokA, until), func(r *driver.Record) { r.ProbeToken = ""; r.LeaseUntil = time.Time{} }), machine.Standing{}, false},
		{"held closed", with(closedRec(0), func(r *driver.Record) { r.Forced = true; r.OpenUntil = until }), machine.Standing{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, ok := machine.StandingOf(c.rec)
			if st != c.want || ok != c.ok {
				t.Fatalf("StandingOf = %+v, %v; want %+v, %v", st, ok, c.want, c.ok)
			}
			if !ok {
				// Admit claims a probe now, or (held closed) a Success
				// changes the record once the hold ends: the decision
				// depends on a time no standing one marks.
				a := admit(c.rec, &pol, machine.At(t0), func() string { return freshID })
				if a.Admitted && a.Grant.Probe {
					return
				}
				after := machine.Settle(c.rec, testName, &a.Grant, machine.Success, &pol, machine.At(until), driver.Counts{})
				if before := machine.Settle(c.rec, testName, &a.Grant, machine.Success, &pol, machine.At(t0), driver.Counts{}); before != nil || after == nil {
					t.Errorf("no standing decision, yet Admit = %+v and Success settles the same before and after the hold", a)
				}
				return
			}
			for _, p := range []machine.Policy{pol, rate} {
				for _, now := range []time.Time{t0.Add(-time.Hour), t0, until.Add(-time.Nanosecond)} {
					read := false
					clk := machine.Reading(func() time.Time { read = true; return now })
					a := admit(c.rec, &p, &clk, func() string { return freshID })
					want := machine.Admission{Admitted: st.Admitted, Grant: st.Grant, State: st.State, Until: st.Until, Forced: st.Forced}
					if a != want {
						t.Errorf("Admit at %s = %+v, want the standing %+v", fmtTime(now), a, want)
					}
					if st.Admitted && read {
						t.Errorf("Admit at %s read the clock for a standing admission", fmtTime(now))
					}
					if !st.Admitted {
						continue
					}
					for _, w := range []driver.Counts{{}, {Calls: 10, Failures: 10}} {
						read = false
						clk := machine.Reading(func() time.Time { read = true; return now })
						next := machine.Settle(c.rec, testName, &st.Grant, machine.Success, &p, &clk, w)
						if st.Quiet && (next != nil || read) {
							t.Errorf("Settle(Success, %+v, %s, %+v) = %+v (clock read: %v), want nil, no clock", p, fmtTime(now), w, next, read)
						}
						if !st.Quiet && next == nil {
							t.Errorf("Settle(Success) on a loud admission changed nothing")
						}
					}
				}
			}
			if !st.Admitted {
				// At Until the rejection gives way to a claimed probe.
				a := admit(c.rec, &pol, machine.At(st.Until), func() string { return freshID })
				if !a.Admitted || !a.Grant.Probe {
					t.Errorf("Admit at Until = %+v, want a claimed probe", a)
				}
			}
		})
	}
}

// TestStateAt: the state StateAt reads is the decision Admit makes at the
// same time: closed admits, open rejects, half-open probing rejects, and
// half-open not probing admits the probe; forced as Admit reports it, and a
// hold closed until it ends. Where no time decides (closed, not held;
// half-open with no claim), it asks for none.
func TestStateAt(t *testing.T) {
	until := t0.Add(time.Hour)
	recs := map[string]*driver.Record{
		"closed":                    closedRec(0),
		"closed, failures counted":  closedRec(2),
		"held closed":               with(closedRec(0), func(r *driver.Record) { r.Forced = true; r.OpenUntil = until }),
		"open":                      openRec(0, until),
		"forced open":               with(openRec(0, until), func(r *driver.Record) { r.Forced = true }),
		"half-open, leased":         halfOpenRec(0, tokA, until),
		"half-open, between probes": with(halfOpenRec(0, tokA, until), func(r *driver.Record) { r.ProbeToken = ""; r.LeaseUntil = time.Time{} }),
	}
	for name, rec := range recs {
		for _, now := range []time.Time{t0.Add(-time.Hour), t0, until.Add(-time.Nanosecond), until, until.Add(time.Hour)} {
			read := false
			clk := machine.Reading(func() time.Time { read = true; return now })
			state, probing, forced := machine.StateAt(rec, &clk)
			a := admit(rec, &pol, machine.At(now), func() string { return freshID })
			var ok bool
			switch {
			case state == driver.StateClosed:
				ok = a.Admitted && !a.Grant.Probe && !probing && forced == (rec.Forced && now.Before(until))
			case state == driver.StateOpen:
				ok = !a.Admitted && a.State == driver.StateOpen && a.Forced == forced && !probing
			case probing:
				ok = !a.Admitted && a.State == driver.StateHalfOpen && !forced
			default:
				ok = a.Admitted && a.Grant.Probe && !forced
			}
			if !ok {
				t.Errorf("%s at %s: StateAt = %v, probing %v, forced %v; Admit = %+v", name, fmtTime(now), state, probing, forced, a)
			}
			if (rec.State == driver.StateClosed && !rec.Forced || rec.State == driver.StateHalfOpen && rec.LeaseUntil.IsZero()) && read {
				t.Errorf("%s: StateAt read the clock, which decides nothing here", name)
			}
		}
	}
}

// TestCounted: the rate rule counts a closed-admitted call of the record
// that admitted it, and a call admitted on no record while there is none,
// but not while an operator holds the circuit closed.
func TestCounted(t *testing.T) {
	closed := machine.Grant{Incarnation: incA, Generation: 3}
	held := with(closedRec(0), func(r *driver.Record) { r.Forced = true; r.OpenUntil = t0.Add(time.Hour) })
	for _, c := range []struct {
		name string
		rec  *driver.Record
		g    machine.Grant
		now  time.Time
		want bool
	}{
		{"closed", closedRec(1), closed, t0, true},
		{"no record", nil, machine.First, t0, true},
		{"no record, admitted on a record since cleared", nil, closed, t0, false},
		{"first record, admitted on none", with(closedRec(0), func(r *driver.Record) { r.Incarnation = driver.FirstIncarnation; r.Generation = 1 }), machine.First, t0, true},
		{"cleared record, admitted on none", machine.Cleared(nil, testName, t0, func() string { return incB }), machine.First, t0, false},
		{"another generation", closedRec(0), machine.Grant{Incarnation: incA, Generation: 2}, t0, false},
		{"open", openRec(0, t0.Add(time.Hour)), closed, t0, false},
		{"probe", halfOpenRec(0, tokA, t0.Add(time.Second)), machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: tokA}, t0, false},
		{"held closed", held, closed, t0, false},
		{"hold ended", held, closed, t0.Add(time.Hour), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := machine.Counted(c.rec, &c.g, machine.At(c.now)); got != c.want {
				t.Fatalf("Counted = %v, want %v", got, c.want)
			}
		})
	}
}

// TestCleared: Clear's record is closed, valid, of the fresh incarnation,
// and has the window epoch of no other record.
func TestCleared(t *testing.T) {
	rec := machine.Cleared(nil, testName, t0, func() string { return incB })
	if err := rec.Check(); err != nil {
		t.Fatalf("Cleared record fails Check: %v", err)
	}
	if rec.State != driver.StateClosed || rec.Failures != 0 || rec.Incarnation != incB || rec.Version != 1 || rec.Generation != 1 {
		t.Fatalf("Cleared = %s", fmtRecord(rec))
	}
	if driver.WindowEpoch(rec) == driver.WindowEpoch(nil) {
		t.Fatal("Cleared record shares the window epoch of no record")
	}
	first := machine.Settle(nil, testName, &machine.First, machine.Failure, &pol, machine.At(t0), driver.Counts{})
	if driver.WindowEpoch(first) != driver.WindowEpoch(nil) {
		t.Fatal("the first record's window epoch is not that of no record")
	}
	if err := first.Check(); err != nil {
		t.Fatalf("first record fails Check: %v", err)
	}
}

// admit returns machine.Admit's decision.
func admit(rec *driver.Record, p *machine.Policy, clk *machine.Clock, fresh func() string) machine.Admission {
	var a machine.Admission
	machine.Admit(rec, p, clk, fresh, &a)
	return a
}
