package machine_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
	"github.com/circuitgen/circuitgen/runtime/internal/machine"
)

// ratePol opens on a failure rate of 50% over at least 4 calls in a minute,
// and on 3 consecutive failures.
var ratePol = machine.Policy{FailureThreshold: 3, FailureRate: 0.5, MinCalls: 4, Window: time.Minute,
	Cooldown: 30 * time.Second, MaxCooldown: 100 * time.Second, ProbeLease: 10 * time.Second, CloseAfter: 3}

// rateOnlyPol is ratePol without the consecutive rule.
var rateOnlyPol = func() machine.Policy { p := ratePol; p.FailureThreshold = 0; return p }()

// TestSettleRateAndProbeRuns covers the rate rule,
// either rule opening, CloseAfter runs of probes and growing cooldowns.
func TestSettleRateAndProbeRuns(t *testing.T) {
	now := t0.Add(time.Minute)
	closedGrant := machine.Grant{Incarnation: incA, Generation: 3}
	probeGrant := machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: tokA}
	lease := t0.Add(10 * time.Second)
	next := func(rec *driver.Record, f func(*driver.Record)) *driver.Record {
		return with(rec, func(r *driver.Record) {
			r.Version++
			r.UpdatedAt = now
			r.ProbeToken = ""
			r.LeaseUntil = time.Time{}
			r.Forced = false
			f(r)
		})
	}
	opened := func(rec *driver.Record, failures int, d time.Duration) *driver.Record {
		return next(rec, func(r *driver.Record) {
			r.State = driver.StateOpen
			r.Failures = failures
			r.OpenUntil = now.Add(d)
		})
	}
	idle := func(successes int) *driver.Record {
		return with(halfOpenRec(3, "", time.Time{}), func(r *driver.Record) { r.Successes = successes })
	}
	tests := []struct {
		name string
		rec  *driver.Record
		g    machine.Grant
		o    machine.Outcome
		p    machine.Policy
		w    driver.Counts
		want *driver.Record
	}{
		// The rate rule, on a closed-admitted failure.
		{"rate: below MinCalls, rate 100%: counts only", closedRec(0), closedGrant, machine.Failure, ratePol,
			driver.Counts{Calls: 3, Failures: 3}, next(closedRec(0), func(r *driver.Record) { r.Failures = 1 })},
		{"rate: at MinCalls, rate exactly 50%: opens", closedRec(0), closedGrant, machine.Failure, ratePol,
			driver.Counts{Calls: 4, Failures: 2}, opened(closedRec(0), 1, 30*time.Second)},
		{"rate: at MinCalls, rate below 50%: counts only", closedRec(1), closedGrant, machine.Failure, ratePol,
			driver.Counts{Calls: 7, Failures: 3}, next(closedRec(1), func(r *driver.Record) { r.Failures = 2 })},
		{"consecutive rule opens though the rate is low", closedRec(2), closedGrant, machine.Failure, ratePol,
			driver.Counts{Calls: 100, Failures: 3}, opened(closedRec(2), 3, 30*time.Second)},
		{"rate only: a failure under the rate changes nothing", closedRec(0), closedGrant, machine.Failure, rateOnlyPol,
			driver.Counts{Calls: 100, Failures: 3}, nil},
		{"rate only: a failure over the rate opens, count untouched", closedRec(0), closedGrant, machine.Failure, rateOnlyPol,
			driver.Counts{Calls: 10, Failures: 9}, opened(closedRec(0), 0, 30*time.Second)},
		{"rate only: many failures never trip without the window", closedRec(0), closedGrant, machine.Failure, rateOnlyPol,
			driver.Counts{}, nil},
		{"rate: a success never opens, whatever the window", closedRec(0), closedGrant, machine.Success, ratePol,
			driver.Counts{Calls: 10, Failures: 10}, nil},
		{"rate: ignored changes nothing", closedRec(0), closedGrant, machine.Ignored, ratePol,
			driver.Counts{Calls: 10, Failures: 10}, nil},
		{"rate: a stale call changes nothing", closedRec(0), machine.Grant{Incarnation: incA, Generation: 2}, machine.Failure, ratePol,
			driver.Counts{Calls: 10, Failures: 10}, nil},
		{"rate: a closed-admitted call on an open circuit changes nothing", openRec(3, now), closedGrant, machine.Failure, ratePol,
			driver.Counts{Calls: 10, Failures: 10}, nil},

		// CloseAfter: a run of probe successes.
		{"CloseAfter 3: first probe success stays half-open, no probe in flight", halfOpenRec(3, tokA, lease), probeGrant, machine.Success, ratePol,
			driver.Counts{}, next(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Successes = 1 })},
		{"CloseAfter 3: second probe success", with(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Successes = 1 }), probeGrant, machine.Success, ratePol,
			driver.Counts{}, next(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Successes = 2 })},
		{"CloseAfter 3: third probe success closes, resets everything", with(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Successes = 2; r.Reopens = 4 }), probeGrant, machine.Success, ratePol,
			driver.Counts{}, next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State = driver.StateClosed
				r.Failures = 0
				r.Generation = 4
				r.OpenUntil = time.Time{}
			})},
		{"CloseAfter 3: a failure ends the run and reopens, doubled", with(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Successes = 2 }), probeGrant, machine.Failure, ratePol,
			driver.Counts{}, next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State = driver.StateOpen
				r.Failures = 4
				r.Reopens = 1
				r.OpenUntil = now.Add(60 * time.Second)
			})},
		{"CloseAfter 3: ignored ends the run and reopens, not doubled", with(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Successes = 2; r.Reopens = 1 }), probeGrant, machine.Ignored, ratePol,
			driver.Counts{}, next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State = driver.StateOpen
				r.Reopens = 1
				r.OpenUntil = now.Add(60 * time.Second)
			})},
		{"CloseAfter 0 means one", halfOpenRec(3, tokA, lease), probeGrant, machine.Success, func() machine.Policy { p := ratePol; p.CloseAfter = 0; return p }(),
			driver.Counts{}, next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State, r.Failures, r.Generation, r.OpenUntil = driver.StateClosed, 0, 4, time.Time{}
			})},
		{"CloseAfter lowered below a run in progress: the next success closes", with(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Successes = 5 }), probeGrant, machine.Success, ratePol,
			driver.Counts{}, next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State, r.Failures, r.Generation, r.OpenUntil = driver.StateClosed, 0, 4, time.Time{}
			})},
		{"a probe of an idle half-open circuit is stale: its claim is gone", idle(1), probeGrant, machine.Success, ratePol, driver.Counts{}, nil},
		{"a closed-admitted call on an idle half-open circuit changes nothing", idle(1), closedGrant, machine.Failure, ratePol, driver.Counts{Calls: 9, Failures: 9}, nil},

		// MaxCooldown: each reopen doubles, up to MaxCooldown.
		{"second reopen: 4× cooldown would pass MaxCooldown: 100s", with(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Reopens = 1 }), probeGrant, machine.Failure, ratePol,
			driver.Counts{}, next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State, r.Failures, r.Reopens, r.OpenUntil = driver.StateOpen, 4, 2, now.Add(100*time.Second)
			})},
		{"reopens saturate at MaxReopens", with(halfOpenRec(3, tokA, lease), func(r *driver.Record) { r.Reopens = driver.MaxReopens }), probeGrant, machine.Failure, ratePol,
			driver.Counts{}, next(halfOpenRec(3, tokA, lease), func(r *driver.Record) {
				r.State, r.Failures, r.Reopens, r.OpenUntil = driver.StateOpen, 4, driver.MaxReopens, now.Add(100*time.Second)
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := machine.Settle(tt.rec, testName, &tt.g, tt.o, &tt.p, machine.At(now), tt.w)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SettleWindow(%s) =\n  %s\nwant\n  %s", tt.o, fmtRecord(got), fmtRecord(tt.want))
			}
			if changed := machine.Settle(tt.rec, testName, &tt.g, tt.o, &tt.p, machine.At(t0.Add(7*time.Hour)), tt.w) != nil; changed != (tt.want != nil) {
				t.Errorf("whether SettleWindow changes the record depends on the time")
			}
			if got != nil {
				if err := got.Check(); err != nil {
					t.Errorf("SettleWindow produced an inconsistent record: %v", err)
				}
			}
		})
	}
}

func TestAdmitProbeRuns(t *testing.T) {
	until := t0.Add(time.Hour)
	forced := with(openRec(3, until), func(r *driver.Record) { r.Forced = true })
	idle := with(halfOpenRec(3, "", time.Time{}), func(r *driver.Record) { r.Successes = 2; r.Reopens = 1 })
	fresh, _ := freshIDs(tokB)
	t.Run("forced open: rejected, and the rejection says forced", func(t *testing.T) {
		got := admit(forced, &ratePol, machine.At(t0), fresh)
		want := machine.Admission{State: driver.StateOpen, Until: until, Forced: true}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Admit = %+v, want %+v", got, want)
		}
	})
	t.Run("forced open, at its end: claims a probe, no longer forced", func(t *testing.T) {
		got := admit(forced, &ratePol, machine.At(until), fresh)
		if !got.Admitted || !got.Grant.Probe || got.Next.Forced || got.Next.State != driver.StateHalfOpen {
			t.Errorf("Admit = %+v, next %s", got, fmtRecord(got.Next))
		}
	})
	t.Run("idle half-open: the next caller claims the next probe, the run kept", func(t *testing.T) {
		fresh, _ := freshIDs(tokB)
		got := admit(idle, &ratePol, machine.At(t0), fresh)
		want := with(idle, func(r *driver.Record) {
			r.Version++
			r.UpdatedAt = t0
			r.ProbeToken = tokB
			r.LeaseUntil = t0.Add(ratePol.ProbeLease)
		})
		if !got.Admitted || !got.Grant.Probe || got.Grant.Token != tokB || !reflect.DeepEqual(got.Next, want) {
			t.Errorf("Admit = %+v\n next %s\n want %s", got, fmtRecord(got.Next), fmtRecord(want))
		}
	})
}

func TestForceOpen(t *testing.T) {
	now := t0.Add(time.Minute)
	d := 5 * time.Minute
	tests := []struct {
		name string
		rec  *driver.Record
		want *driver.Record
	}{
		{"no record: created open and forced", nil, &driver.Record{Name: testName, State: driver.StateOpen, Generation: 1,
			Incarnation: freshID, Version: 1, UpdatedAt: now, OpenUntil: now.Add(d), Forced: true}},
		{"closed with failures: open, count kept", closedRec(2), with(closedRec(2), func(r *driver.Record) {
			r.State, r.OpenUntil, r.Forced, r.Version, r.UpdatedAt = driver.StateOpen, now.Add(d), true, 8, now
		})},
		{"open for longer: held for d exactly", openRec(3, now.Add(time.Hour)), with(openRec(3, now.Add(time.Hour)), func(r *driver.Record) {
			r.OpenUntil, r.Forced, r.Version, r.UpdatedAt = now.Add(d), true, 8, now
		})},
		{"half-open with a probe and a run: the claim and the run are gone", with(halfOpenRec(3, tokA, now), func(r *driver.Record) { r.Successes = 2 }),
			with(openRec(3, now.Add(d)), func(r *driver.Record) { r.Forced, r.Version, r.UpdatedAt = true, 8, now })},
		{"held closed: open for d in the same generation", heldRec(now.Add(time.Hour)),
			with(heldRec(now.Add(time.Hour)), func(r *driver.Record) {
				r.State, r.OpenUntil, r.Version, r.UpdatedAt = driver.StateOpen, now.Add(d), 8, now
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh, _ := freshIDs()
			got := machine.ForceOpen(tt.rec, testName, now, d, fresh)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ForceOpen =\n  %s\nwant\n  %s", fmtRecord(got), fmtRecord(tt.want))
			}
			if err := got.Check(); err != nil {
				t.Errorf("ForceOpen produced an inconsistent record: %v", err)
			}
		})
	}
	t.Run("a probe admitted before the force cannot settle", func(t *testing.T) {
		fresh, _ := freshIDs()
		rec := machine.ForceOpen(halfOpenRec(3, tokA, now), testName, now, d, fresh)
		g := machine.Grant{Incarnation: incA, Generation: 3, Probe: true, Token: tokA}
		if got := machine.Settle(rec, testName, &g, machine.Success, &ratePol, machine.At(now), driver.Counts{}); got != nil {
			t.Errorf("Settle = %s, want nil", fmtRecord(got))
		}
	})
}

func TestPolicyRules(t *testing.T) {
	slow := machine.Policy{SlowCall: time.Second}
	classify := []struct {
		p    machine.Policy
		o    machine.Outcome
		d    time.Duration
		want machine.Outcome
	}{
		{slow, machine.Success, time.Second, machine.Success},
		{slow, machine.Success, time.Second + 1, machine.Failure},
		{slow, machine.Ignored, time.Hour, machine.Ignored},
		{slow, machine.Failure, 0, machine.Failure},
		{machine.Policy{}, machine.Success, time.Hour, machine.Success},
	}
	for _, tt := range classify {
		if got := tt.p.Classify(tt.o, tt.d); got != tt.want {
			t.Errorf("Policy{SlowCall: %v}.Classify(%s, %v) = %s, want %s", tt.p.SlowCall, tt.o, tt.d, got, tt.want)
		}
	}
	trips := []struct {
		p    machine.Policy
		w    driver.Counts
		want bool
	}{
		{ratePol, driver.Counts{Calls: 3, Failures: 3}, false},
		{ratePol, driver.Counts{Calls: 4, Failures: 2}, true},
		{ratePol, driver.Counts{Calls: 5, Failures: 2}, false},
		{func() machine.Policy { p := ratePol; p.FailureRate = 1; return p }(), driver.Counts{Calls: 9, Failures: 8}, false},
		{func() machine.Policy { p := ratePol; p.FailureRate = 1; return p }(), driver.Counts{Calls: 9, Failures: 9}, true},
		{func() machine.Policy { p := ratePol; p.FailureRate = 0.1; p.MinCalls = 10; return p }(), driver.Counts{Calls: 10, Failures: 1}, true},
		{func() machine.Policy { p := ratePol; p.FailureRate = 0; return p }(), driver.Counts{Calls: 9, Failures: 9}, false},
	}
	for _, tt := range trips {
		if got := tt.p.Trips(tt.w); got != tt.want {
			t.Errorf("Policy{FailureRate: %v, MinCalls: %d}.Trips(%+v) = %v, want %v", tt.p.FailureRate, tt.p.MinCalls, tt.w, got, tt.want)
		}
	}
	cooldowns := []struct {
		cooldown, max time.Duration
		reopens       int
		want          time.Duration
	}{
		{30 * time.Second, 0, 0, 30 * time.Second},
		{30 * time.Second, 0, 5, 30 * time.Second},
		{30 * time.Second, 30 * time.Second, 5, 30 * time.Second},
		{30 * time.Second, 10 * time.Minute, 0, 30 * time.Second},
		{30 * time.Second, 10 * time.Minute, 1, time.Minute},
		{30 * time.Second, 10 * time.Minute, 4, 8 * time.Minute},
		{30 * time.Second, 10 * time.Minute, 5, 10 * time.Minute},
		{time.Second, (24 * time.Hour), driver.MaxReopens, (24 * time.Hour)},
	}
	for _, tt := range cooldowns {
		p := machine.Policy{Cooldown: tt.cooldown, MaxCooldown: tt.max}
		if got := p.CooldownAfter(tt.reopens); got != tt.want {
			t.Errorf("Policy{Cooldown: %v, MaxCooldown: %v}.CooldownAfter(%d) = %v, want %v", tt.cooldown, tt.max, tt.reopens, got, tt.want)
		}
	}
}

func TestRecordCheckRunsAndForced(t *testing.T) {
	idle := with(halfOpenRec(3, "", time.Time{}), func(r *driver.Record) { r.Successes = 1 })
	good := map[string]*driver.Record{
		"forced open":                  with(openRec(3, t0), func(r *driver.Record) { r.Forced = true }),
		"idle half-open with a run":    idle,
		"half-open probe with a run":   with(halfOpenRec(3, tokA, t0), func(r *driver.Record) { r.Successes = 99 }),
		"open with reopens at the max": with(openRec(3, t0), func(r *driver.Record) { r.Reopens = driver.MaxReopens }),
	}
	for name, rec := range good {
		if err := rec.Check(); err != nil {
			t.Errorf("%s: Check() = %v", name, err)
		}
	}
	bad := map[string]*driver.Record{
		"forced closed":                with(closedRec(0), func(r *driver.Record) { r.Forced = true }),
		"forced half-open":             with(halfOpenRec(3, tokA, t0), func(r *driver.Record) { r.Forced = true }),
		"idle half-open without a run": with(idle, func(r *driver.Record) { r.Successes = 0 }),
		"idle half-open with a lease":  with(idle, func(r *driver.Record) { r.LeaseUntil = t0 }),
		"successes on a closed record": with(closedRec(0), func(r *driver.Record) { r.Successes = 1 }),
		"successes at MaxCloseAfter":   with(idle, func(r *driver.Record) { r.Successes = (driver.MaxSuccesses + 1) }),
		"negative successes":           with(halfOpenRec(3, tokA, t0), func(r *driver.Record) { r.Successes = -1 }),
		"negative reopens":             with(openRec(3, t0), func(r *driver.Record) { r.Reopens = -1 }),
		"reopens beyond the maximum":   with(openRec(3, t0), func(r *driver.Record) { r.Reopens = driver.MaxReopens + 1 }),
	}
	for name, rec := range bad {
		if err := rec.Check(); err == nil {
			t.Errorf("%s: Check() = nil, want an error", name)
		}
	}
}

// TestRetryAfter covers the rounding and both bounds of a rejection's wait.
func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct{ left, want time.Duration }{
		{-time.Hour, time.Second},
		{0, time.Second},
		{999 * time.Millisecond, time.Second},
		{1500*time.Millisecond + 1, 1501 * time.Millisecond},
		{30 * time.Second, 30 * time.Second},
		{24*time.Hour + time.Hour, 25 * time.Hour},
		{1000 * time.Hour, 25 * time.Hour},
	} {
		if got := machine.RetryAfter(tc.left); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.left, got, tc.want)
		}
	}
}

// TestLanded covers the match of a stored record against a refused try: the
// same instants in another zone match, any other field does not.
func TestLanded(t *testing.T) {
	tried := openRec(3, t0.Add(time.Minute))
	for _, tc := range []struct {
		name   string
		stored *driver.Record
		want   bool
	}{
		{"none", nil, false},
		{"itself", tried, true},
		{"a copy in another zone", with(tried, func(r *driver.Record) {
			r.OpenUntil = r.OpenUntil.In(time.FixedZone("x", 3600))
			r.UpdatedAt = r.UpdatedAt.Local()
		}), true},
		{"another deadline", with(tried, func(r *driver.Record) { r.OpenUntil = r.OpenUntil.Add(time.Millisecond) }), false},
		{"another version", with(tried, func(r *driver.Record) { r.Version++ }), false},
		{"another count", with(tried, func(r *driver.Record) { r.Failures++ }), false},
	} {
		if got := machine.Landed(tc.stored, tried); got != tc.want {
			t.Errorf("%s: Landed = %v, want %v", tc.name, got, tc.want)
		}
	}
}
