package circuit_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// refModel is the reference model of one circuit: a deliberately simple and
// slow reading of the rules in DESIGN.md, written without the state
// machine. It keeps every completed call with its time and epoch, and counts
// the window by filtering them, where the real implementation keeps ten
// tagged atomic cells.
type refModel struct {
	p Policy

	exists                       bool
	state                        circuit.State
	failures, successes, reopens int
	incarnation                  int
	generation                   uint64
	openUntil, leaseUntil        time.Time
	probeOut, forced             bool
	calls                        []refCall
}

// Policy is circuit.Policy, shortened.
type Policy = circuit.Policy

type refCall struct {
	at          time.Time
	failure     bool
	incarnation int
	generation  uint64
}

// refResult is what a call did, as the model and the Breaker both report it.
type refResult struct {
	ran    bool
	probe  bool
	reject *circuit.OpenError // State, Until, Forced only
}

func (m *refModel) cooldown() time.Duration {
	d := m.p.Cooldown
	if m.p.MaxCooldown == 0 {
		return d
	}
	for range m.reopens {
		d = min(2*d, m.p.MaxCooldown)
	}
	return d
}

// windowCounts counts the calls of the current closed period whose bucket is
// the bucket of now or one of the nine before it.
func (m *refModel) windowCounts(now time.Time) (calls, failures int) {
	width := int64(m.p.Window) / 10
	cur := now.UnixNano() / width
	for _, c := range m.calls {
		b := c.at.UnixNano() / width
		if c.incarnation == m.incarnation && c.generation == m.generation && b > cur-10 && b <= cur {
			calls++
			if c.failure {
				failures++
			}
		}
	}
	return calls, failures
}

// call runs one call admitted at now, whose operation takes took and
// returns o.
func (m *refModel) call(now time.Time, took time.Duration, o circuit.Outcome) refResult {
	if !m.exists { // no record yet: closed, of the first incarnation (0)
		m.state, m.generation = circuit.StateClosed, 1
	}
	probe := false
	switch m.state {
	case circuit.StateOpen:
		if now.Before(m.openUntil) {
			return refResult{reject: &circuit.OpenError{State: circuit.StateOpen, Until: m.openUntil, Forced: m.forced}}
		}
		probe = true
	case circuit.StateHalfOpen:
		if m.probeOut && now.Before(m.leaseUntil) {
			return refResult{reject: &circuit.OpenError{State: circuit.StateHalfOpen, Until: m.leaseUntil}}
		}
		probe = true
	}
	if probe {
		m.state, m.probeOut, m.forced, m.leaseUntil = circuit.StateHalfOpen, true, false, now.Add(m.p.ProbeLease)
	}
	end := now.Add(took)
	if o == circuit.Success && m.p.SlowCall > 0 && took > m.p.SlowCall {
		o = circuit.Failure
	}
	if probe {
		m.probeOut = false
		switch o {
		case circuit.Success:
			m.successes++
			if m.successes >= max(1, m.p.CloseAfter) {
				m.state, m.failures, m.successes, m.reopens = circuit.StateClosed, 0, 0, 0
				m.generation++
			}
			return refResult{ran: true, probe: true}
		case circuit.Failure:
			m.failures = min(m.failures+1, 1000)
			m.reopens = min(m.reopens+1, driver.MaxReopens)
		}
		m.state, m.successes, m.openUntil = circuit.StateOpen, 0, end.Add(m.cooldown())
		return refResult{ran: true, probe: true}
	}
	if o == circuit.Ignored {
		return refResult{ran: true}
	}
	if m.p.FailureRate > 0 {
		m.calls = append(m.calls, refCall{at: end, failure: o == circuit.Failure, incarnation: m.incarnation, generation: m.generation})
	}
	if o == circuit.Success {
		m.failures = 0
		return refResult{ran: true}
	}
	if m.p.FailureThreshold > 0 {
		m.failures = min(m.failures+1, 1000)
		m.exists = true // the first counted failure creates the record
	}
	calls, failures := 0, 0
	if m.p.FailureRate > 0 {
		calls, failures = m.windowCounts(end)
	}
	byRate := m.p.FailureRate > 0 && calls >= m.p.MinCalls && float64(failures)/float64(calls) >= m.p.FailureRate
	byCount := m.p.FailureThreshold > 0 && m.failures >= m.p.FailureThreshold
	if byRate || byCount {
		m.state, m.openUntil, m.exists = circuit.StateOpen, end.Add(m.cooldown()), true
	}
	return refResult{ran: true}
}

// abandon is a call admitted at now whose caller never settles it (a
// crashed process): it holds a probe's claim until its lease ends.
func (m *refModel) abandon(now time.Time) refResult {
	before := *m
	r := m.call(now, 0, circuit.Ignored)
	if r.probe { // undo the settlement: the probe is still out
		*m = before
		m.state, m.probeOut, m.forced, m.leaseUntil = circuit.StateHalfOpen, true, false, now.Add(m.p.ProbeLease)
	}
	return r
}

func (m *refModel) force(now time.Time, d time.Duration) {
	if !m.exists {
		m.exists, m.incarnation, m.generation = true, m.incarnation+1, 1
		m.failures, m.successes, m.reopens = 0, 0, 0
	}
	m.state, m.openUntil, m.forced, m.probeOut, m.successes = circuit.StateOpen, now.Add(d), true, false, 0
}

// clear leaves a closed record of a fresh incarnation, with no failures.
func (m *refModel) clear() {
	m.exists, m.forced, m.probeOut = true, false, false
	m.state, m.incarnation, m.generation = circuit.StateClosed, m.incarnation+1, 1
	m.failures, m.successes, m.reopens = 0, 0, 0
}

// randomPolicy returns a valid random policy with small numbers, so that
// random histories reach every rule.
func randomPolicy(r *rand.Rand) Policy {
	p := Policy{
		FailureThreshold: r.IntN(6),
		Cooldown:         time.Duration(1+r.IntN(20)) * time.Second,
		ProbeLease:       time.Duration(1+r.IntN(5)) * time.Second,
		CloseAfter:       r.IntN(4),
	}
	if p.FailureThreshold == 0 || r.IntN(2) == 0 {
		p.FailureRate = []float64{0.1, 0.25, 0.5, 2.0 / 3, 1}[r.IntN(5)]
		p.MinCalls = 1 + r.IntN(8)
		p.Window = time.Duration(1+r.IntN(60)) * time.Second
	}
	if r.IntN(2) == 0 {
		p.SlowCall = time.Duration(1+r.IntN(3)) * time.Second
	}
	if r.IntN(2) == 0 {
		p.MaxCooldown = p.Cooldown * time.Duration(1+r.IntN(10))
	}
	return p
}

// TestBreakerMatchesReferenceModel runs thousands of random call histories
// through the Breaker and through refModel, and compares every call's
// result and the circuit's state after it.
func TestBreakerMatchesReferenceModel(t *testing.T) {
	histories, steps := 3000, 120
	if testing.Short() || raceEnabled {
		histories = 600
	}
	seed := uint64(time.Now().UnixNano())
	for h := range histories {
		r := rand.New(rand.NewPCG(seed, uint64(h)))
		p := randomPolicy(r)
		if err := p.Validate(); err != nil {
			t.Fatalf("randomPolicy: %v", err)
		}
		if err := runHistory(t, r, p, steps); err != nil {
			t.Fatalf("seed %d history %d, policy %+v:\n%v", seed, h, p, err)
		}
	}
}

func runHistory(t *testing.T, r *rand.Rand, p Policy, steps int) error {
	clock := newClock()
	s := newMemStore(t, clock)
	b := circuit.New(s, circuit.WithClock(clock.Now))
	m := &refModel{p: p}
	ctx := context.Background()
	boom := errors.New("boom")
	var log []string
	for i := range steps {
		clock.Advance(time.Duration(r.IntN(int(3*time.Second/time.Millisecond))) * time.Millisecond)
		now := clock.Now()
		var want, got refResult
		var step string
		switch k := r.IntN(100); {
		case k < 2:
			step = "clear"
			m.clear()
			if err := b.Clear(ctx, testName); err != nil {
				return err
			}
		case k < 4:
			d := time.Duration(1+r.IntN(10)) * time.Second
			step = fmt.Sprintf("force %v", d)
			m.force(now, d)
			if err := b.ForceOpen(ctx, testName, d); err != nil {
				return err
			}
		case k < 7:
			step = "abandon"
			want = m.abandon(now)
			tk, err := b.Allow(ctx, testName, p)
			got = result(tk != nil, tk != nil && tk.Probe(), err)
			if err != nil && got.reject == nil {
				return err
			}
		default:
			o := []circuit.Outcome{circuit.Success, circuit.Success, circuit.Failure, circuit.Ignored}[r.IntN(4)]
			took := time.Duration(r.IntN(4000)) * time.Millisecond
			step = fmt.Sprintf("call %s took %v", o, took)
			want = m.call(now, took, o)
			ran, probe := false, false
			err := b.Run(ctx, testName, p, func(context.Context) (circuit.Outcome, error) {
				ran = true
				_, probe = s.probe(testName)
				clock.Advance(took)
				if o == circuit.Failure {
					return o, boom
				}
				return o, nil
			})
			if !ran {
				clock.Advance(took) // time passes alike
			}
			if err != nil && !errors.Is(err, boom) && !errors.As(err, new(*circuit.OpenError)) {
				return err
			}
			got = result(ran, probe, err)
		}
		log = append(log, fmt.Sprintf("%3d t0+%-10v %s", i, now.Sub(t0), step))
		if err := compare(want, got); err != nil {
			return fmt.Errorf("%s\nstep %d: %v", joinLines(log), i, err)
		}
		snap, err := b.Snapshot(ctx, testName)
		if err != nil {
			return err
		}
		if err := compareState(m, snap, clock.Now()); err != nil {
			return fmt.Errorf("%s\nafter step %d: %v", joinLines(log), i, err)
		}
	}
	return nil
}

func result(ran, probe bool, err error) refResult {
	var oe *circuit.OpenError
	if errors.As(err, &oe) {
		return refResult{reject: &circuit.OpenError{State: oe.State, Until: oe.Until, Forced: oe.Forced}}
	}
	return refResult{ran: ran, probe: probe}
}

func compare(want, got refResult) error {
	if want.ran != got.ran || want.probe != got.probe || (want.reject == nil) != (got.reject == nil) {
		return fmt.Errorf("got %+v, model %+v", got, want)
	}
	if w, g := want.reject, got.reject; w != nil && (w.State != g.State || !w.Until.Equal(g.Until) || w.Forced != g.Forced) {
		return fmt.Errorf("rejected with %s until t0+%v forced %t; model %s until t0+%v forced %t",
			g.State, g.Until.Sub(t0), g.Forced, w.State, w.Until.Sub(t0), w.Forced)
	}
	return nil
}

func compareState(m *refModel, s circuit.Snapshot, now time.Time) error {
	if s.Exists != m.exists {
		return fmt.Errorf("exists %t, model %t", s.Exists, m.exists)
	}
	if !m.exists {
		return nil
	}
	// The state by time: an open circuit whose cooldown is over reads
	// half-open, ready to probe, and no longer forced; a half-open one
	// probes while a claim is live.
	state, forced, probing := m.state, m.forced, false
	switch {
	case m.state == circuit.StateOpen && !now.Before(m.openUntil):
		state, forced = circuit.StateHalfOpen, false
	case m.state == circuit.StateHalfOpen:
		probing = m.probeOut && now.Before(m.leaseUntil)
	}
	want := fmt.Sprintf("%s probing=%t failures=%d successes=%d reopens=%d forced=%t gen=%d",
		state, probing, m.failures, m.successes, m.reopens, forced, m.generation)
	got := fmt.Sprintf("%s probing=%t failures=%d successes=%d reopens=%d forced=%t gen=%d",
		s.State, s.Probing, s.Failures, s.Successes, s.Reopens, s.Forced, s.Generation)
	if m.state == circuit.StateOpen {
		want += fmt.Sprintf(" until=t0+%v", m.openUntil.Sub(t0))
		got += fmt.Sprintf(" until=t0+%v", s.OpenUntil.Sub(t0))
	}
	if got != want {
		return fmt.Errorf("state %s\nmodel %s", got, want)
	}
	return nil
}

func joinLines(lines []string) string {
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}
