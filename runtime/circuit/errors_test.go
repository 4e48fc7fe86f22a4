package circuit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

type statusErr struct{ code int }

func (e statusErr) Error() string   { return fmt.Sprintf("status %d", e.code) }
func (e statusErr) StatusCode() int { return e.code }

type httpStatusErr struct{ code int }

func (e *httpStatusErr) Error() string       { return fmt.Sprintf("http status %d", e.code) }
func (e *httpStatusErr) HTTPStatusCode() int { return e.code }

// wrapStatus carries a status and wraps an error that carries another.
type wrapStatus struct {
	code int
	err  error
}

func (e wrapStatus) Error() string   { return fmt.Sprintf("status %d: %v", e.code, e.err) }
func (e wrapStatus) StatusCode() int { return e.code }
func (e wrapStatus) Unwrap() error   { return e.err }

func TestErrorStatus(t *testing.T) {
	plain := errors.New("plain")
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantOK   bool
	}{
		{"nil", nil, 0, false},
		{"plain error", plain, 0, false},
		{"wrapped plain error", fmt.Errorf("call: %w", plain), 0, false},
		{"StatusCode() int", statusErr{503}, 503, true},
		{"HTTPStatusCode() int", &httpStatusErr{502}, 502, true},
		{"StatusCode wrapped with %w", fmt.Errorf("get: %w", statusErr{504}), 504, true},
		{"HTTPStatusCode wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", &httpStatusErr{429})), 429, true},
		{"wrapped with %v loses the status", fmt.Errorf("get: %v", statusErr{503}), 0, false},
		{"joined, status second", errors.Join(plain, statusErr{500}), 500, true},
		{"joined, first status wins", errors.Join(&httpStatusErr{502}, statusErr{503}), 502, true},
		{"joined, none", errors.Join(plain, io.EOF), 0, false},
		{"joined inside a wrap", fmt.Errorf("x: %w", errors.Join(plain, fmt.Errorf("y: %w", statusErr{418}))), 418, true},
		{"several %w", fmt.Errorf("%w and %w", plain, &httpStatusErr{503}), 503, true},
		{"outermost status wins over an inner one", wrapStatus{400, statusErr{503}}, 400, true},
		{"context.DeadlineExceeded", context.DeadlineExceeded, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, ok := circuit.ErrorStatus(tt.err)
			if code != tt.wantCode || ok != tt.wantOK {
				t.Errorf("ErrorStatus = %d, %v; want %d, %v", code, ok, tt.wantCode, tt.wantOK)
			}
		})
	}
}

// openAt opens a circuit with threshold 1 and the given cooldown at t0, then
// calls it at t0+elapsed and returns the rejection.
func openAt(t *testing.T, cooldown, elapsed time.Duration) (*circuit.OpenError, error) {
	t.Helper()
	clock := newClock()
	b := circuit.New(newMemStore(t, clock), circuit.WithClock(clock.Now))
	p := circuit.Policy{FailureThreshold: 1, Cooldown: cooldown, ProbeLease: time.Second}
	boom := errors.New("boom")
	if err := b.Run(t.Context(), testName, p, failing(boom)); !errors.Is(err, boom) {
		t.Fatalf("opening call = %v, want %v", err, boom)
	}
	clock.Advance(elapsed)
	err := b.Run(t.Context(), testName, p, mustNotRun(t))
	var oe *circuit.OpenError
	if !errors.As(err, &oe) {
		t.Fatalf("call during cooldown = %v, want *OpenError", err)
	}
	return oe, err
}

func TestOpenError(t *testing.T) {
	tests := []struct {
		name        string
		cooldown    time.Duration
		elapsed     time.Duration
		wantAfter   time.Duration
		wantSeconds int
	}{
		{"whole cooldown ahead", 30 * time.Second, 0, 30 * time.Second, 30},
		{"fraction of a second rounds up", 30 * time.Second, 28500 * time.Millisecond, 1500 * time.Millisecond, 2},
		{"one nanosecond over a second rounds up to the millisecond", 30 * time.Second, 29*time.Second - time.Nanosecond, time.Second + time.Millisecond, 2},
		{"deadline under a second away: at least 1s", 30 * time.Second, 29700 * time.Millisecond, time.Second, 1},
		{"deadline a nanosecond away: at least 1s", 30 * time.Second, 30*time.Second - time.Nanosecond, time.Second, 1},
		{"longest cooldown", 24 * time.Hour, time.Second, 24*time.Hour - time.Second, 24*3600 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oe, err := openAt(t, tt.cooldown, tt.elapsed)
			if got := oe.RetryAfter(); got != tt.wantAfter {
				t.Errorf("RetryAfter() = %v, want %v", got, tt.wantAfter)
			}
			if got := oe.RetryAfterSeconds(); got != tt.wantSeconds {
				t.Errorf("RetryAfterSeconds() = %d, want %d", got, tt.wantSeconds)
			}
			if oe.Name != testName || oe.State != circuit.StateOpen || !oe.Until.Equal(t0.Add(tt.cooldown)) {
				t.Errorf("OpenError = {Name %q State %v Until %v}, want {%q open %v}", oe.Name, oe.State, oe.Until, testName, t0.Add(tt.cooldown))
			}
			if !errors.Is(err, circuit.ErrOpen) {
				t.Error("errors.Is(err, circuit.ErrOpen) = false")
			}
			wrapped := fmt.Errorf("handler: %w", err)
			var again *circuit.OpenError
			if !errors.As(wrapped, &again) || again != oe || !errors.Is(wrapped, circuit.ErrOpen) {
				t.Error("a wrapped OpenError is not reachable with errors.As/errors.Is")
			}
			msg := err.Error()
			if !strings.Contains(msg, testName) || !strings.Contains(msg, fmt.Sprintf("retry after %ds", tt.wantSeconds)) {
				t.Errorf("Error() = %q, want the name and the retry-after", msg)
			}
			var se *circuit.StateError
			if errors.As(err, &se) {
				t.Error("an OpenError matched *StateError")
			}
		})
	}
	t.Run("ErrOpen is not every error", func(t *testing.T) {
		if errors.Is(errors.New("circuit open"), circuit.ErrOpen) {
			t.Error("an unrelated error matched ErrOpen")
		}
	})
}

func TestOpenErrorRetryAfterIsBounded(t *testing.T) {
	// The clock steps back 10h after a 24h cooldown was recorded: the
	// deadline is 34h away, more than any policy allows.
	clock := newClock()
	b := circuit.New(newMemStore(t, clock), circuit.WithClock(clock.Now))
	p := circuit.Policy{FailureThreshold: 1, Cooldown: (24 * time.Hour), ProbeLease: time.Second}
	_ = b.Run(t.Context(), testName, p, failing(errors.New("boom")))
	clock.Set(t0.Add(-10 * time.Hour))
	var oe *circuit.OpenError
	if err := b.Run(t.Context(), testName, p, mustNotRun(t)); !errors.As(err, &oe) {
		t.Fatalf("call = %v, want *OpenError", err)
	}
	if limit := (24 * time.Hour) + time.Hour; oe.RetryAfter() > limit || oe.RetryAfter() < (24*time.Hour) {
		t.Errorf("RetryAfter() = %v, want within [%v, %v]", oe.RetryAfter(), (24 * time.Hour), limit)
	}
	if got, want := oe.RetryAfterSeconds(), int(oe.RetryAfter()/time.Second); got != want {
		t.Errorf("RetryAfterSeconds() = %d, want %d", got, want)
	}
	if !oe.Until.Equal(t0.Add((24 * time.Hour))) {
		t.Errorf("Until = %v, want the recorded deadline", oe.Until)
	}
}

func TestOpenErrorHalfOpen(t *testing.T) {
	clock := newClock()
	b := circuit.New(newMemStore(t, clock), circuit.WithClock(clock.Now))
	p := circuit.Policy{FailureThreshold: 1, Cooldown: 5 * time.Second, ProbeLease: 10 * time.Second}
	_ = b.Run(t.Context(), testName, p, failing(errors.New("boom")))
	clock.Advance(5 * time.Second)
	probe, err := b.Allow(t.Context(), testName, p)
	if err != nil || !probe.Probe() {
		t.Fatalf("Allow after cooldown = %v, %v; want the probe", probe, err)
	}
	clock.Advance(2500 * time.Millisecond)
	err = b.Run(t.Context(), testName, p, mustNotRun(t))
	var oe *circuit.OpenError
	if !errors.As(err, &oe) {
		t.Fatalf("call during the probe = %v, want *OpenError", err)
	}
	if oe.State != circuit.StateHalfOpen || !oe.Until.Equal(t0.Add(15*time.Second)) {
		t.Errorf("OpenError state %v until %v, want half_open until t0+15s", oe.State, oe.Until)
	}
	if oe.RetryAfter() != 7500*time.Millisecond || oe.RetryAfterSeconds() != 8 {
		t.Errorf("RetryAfter %v (%ds), want 7.5s (8s)", oe.RetryAfter(), oe.RetryAfterSeconds())
	}
	if !strings.Contains(oe.Error(), "half-open") {
		t.Errorf("Error() = %q, want it to say half-open", oe.Error())
	}
	if err := probe.Done(circuit.Success); err != nil {
		t.Fatal(err)
	}
}

func TestStateError(t *testing.T) {
	storeErr := errors.New("disk full")
	callErr := errors.New("upstream 503")
	tests := []struct {
		name        string
		err         *circuit.StateError
		reach       []error
		notReach    []error
		wantCorrupt bool
		wantMsg     []string
	}{
		{
			name:     "load failure before the call",
			err:      &circuit.StateError{Name: testName, Op: "load", Err: storeErr},
			reach:    []error{storeErr},
			notReach: []error{callErr, driver.ErrCorrupt, circuit.ErrOpen},
			wantMsg:  []string{testName, "load", "disk full"},
		},
		{
			name:     "replace failure after the call, which returned an error",
			err:      &circuit.StateError{Name: testName, Op: "replace", Err: storeErr, CallErr: callErr, Ran: true},
			reach:    []error{storeErr, callErr},
			notReach: []error{driver.ErrCorrupt},
			wantMsg:  []string{"replace", "disk full", "after the operation ran", "upstream 503"},
		},
		{
			name:     "replace failure after a call that succeeded",
			err:      &circuit.StateError{Name: testName, Op: "replace", Err: storeErr, Ran: true},
			reach:    []error{storeErr},
			notReach: []error{callErr},
			wantMsg:  []string{"after the operation ran"},
		},
		{
			name:        "corrupt record",
			err:         &circuit.StateError{Name: testName, Op: "load", Err: fmt.Errorf("decode %s.json: %w", circuit.Key(testName), driver.ErrCorrupt)},
			reach:       []error{driver.ErrCorrupt},
			wantCorrupt: true,
			wantMsg:     []string{"corrupt circuit record"},
		},
		{
			name:        "corrupt record joined with another error",
			err:         &circuit.StateError{Name: testName, Op: "load", Err: errors.Join(io.ErrUnexpectedEOF, driver.ErrCorrupt)},
			reach:       []error{driver.ErrCorrupt, io.ErrUnexpectedEOF},
			wantCorrupt: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error = tt.err
			for _, target := range tt.reach {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(err, %v) = false", target)
				}
			}
			for _, target := range tt.notReach {
				if errors.Is(err, target) {
					t.Errorf("errors.Is(err, %v) = true", target)
				}
			}
			if got := tt.err.Corrupt(); got != tt.wantCorrupt {
				t.Errorf("Corrupt() = %v, want %v", got, tt.wantCorrupt)
			}
			for _, s := range tt.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Error() = %q, want it to contain %q", err.Error(), s)
				}
			}
			if !tt.err.Ran && strings.Contains(err.Error(), "after the operation ran") {
				t.Errorf("Error() = %q claims the operation ran", err.Error())
			}
			var se *circuit.StateError
			if !errors.As(fmt.Errorf("wrapped: %w", err), &se) || se != tt.err {
				t.Error("a wrapped StateError is not reachable with errors.As")
			}
		})
	}
	t.Run("CallErr's own type is reachable with errors.As", func(t *testing.T) {
		err := error(&circuit.StateError{Name: testName, Op: "replace", Err: storeErr, CallErr: statusErr{503}, Ran: true})
		var se statusErr
		if !errors.As(err, &se) || se.code != 503 {
			t.Errorf("errors.As(err, *statusErr) = false")
		}
	})
}

func TestConfigError(t *testing.T) {
	tests := []struct {
		name string
		err  *circuit.ConfigError
		want string
	}{
		{"without a value", &circuit.ConfigError{Field: "name", Reason: "circuit name is empty"},
			"circuit: invalid name: circuit name is empty"},
		{"with a value, quoted", &circuit.ConfigError{Field: "Cooldown", Value: "0s", Reason: "must be within 1s..24h"},
			`circuit: invalid Cooldown "0s": must be within 1s..24h`},
		{"a hostile value is quoted safely", &circuit.ConfigError{Field: "name", Value: "a\nb", Reason: "bad"},
			`circuit: invalid name "a\nb": bad`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("from Validate", func(t *testing.T) {
		err := circuit.Policy{FailureThreshold: -1, Cooldown: time.Second, ProbeLease: time.Second}.Validate()
		if err == nil || err.Error() != `circuit: invalid FailureThreshold "-1": must be within 1..1000` {
			t.Errorf("Validate() error = %v", err)
		}
	})
	t.Run("from ValidateName, newline escaped", func(t *testing.T) {
		err := circuit.ValidateName("a\nb")
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("ValidateName error = %q, want the newline escaped", err)
		}
	})
}
