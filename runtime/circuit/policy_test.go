package circuit_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
)

func TestDefaultPolicyIsValid(t *testing.T) {
	if err := circuit.DefaultPolicy.Validate(); err != nil {
		t.Fatalf("DefaultPolicy.Validate() = %v", err)
	}
}

func TestValidateReportsEveryBadField(t *testing.T) {
	tests := []struct {
		name   string
		p      circuit.Policy
		fields []string
	}{
		{"valid", circuit.DefaultPolicy, nil},
		{"threshold", circuit.Policy{FailureThreshold: -1, Cooldown: time.Second, ProbeLease: time.Second}, []string{"FailureThreshold"}},
		{"threshold zero: the default", circuit.Policy{FailureThreshold: 0, Cooldown: time.Second, ProbeLease: time.Second}, nil},
		{"all three", circuit.Policy{FailureThreshold: 1001, Cooldown: 25 * time.Hour, ProbeLease: 2 * time.Hour}, []string{"FailureThreshold", "Cooldown", "ProbeLease"}},
		{"zero: DefaultPolicy", circuit.Policy{}, nil},
		{"rate only", rateOnly(0.5), nil},
		{"rate and threshold", withRate(rateOnly(0), 1), nil},
		{"rate zero and no threshold: the default threshold", withRate(rateOnly(0), 0), nil},
		{"rate negative", withRate(rateOnly(0), -0.1), []string{"FailureRate"}},
		{"rate above one", withRate(rateOnly(0), 1.01), []string{"FailureRate"}},
		{"rate NaN", withRate(rateOnly(0), math.NaN()), []string{"FailureRate"}},
		{"rate without min calls or window", circuit.Policy{FailureRate: 0.5, Cooldown: time.Second, ProbeLease: time.Second}, []string{"MinCalls", "Window"}},
		{"min calls and window without rate are inert", circuit.Policy{FailureThreshold: 1, MinCalls: 5, Window: time.Minute, Cooldown: time.Second, ProbeLease: time.Second}, nil},
		{"min calls and window out of bounds without rate", circuit.Policy{FailureThreshold: 1, MinCalls: -1, Window: 2 * time.Hour, Cooldown: time.Second, ProbeLease: time.Second}, []string{"MinCalls", "Window"}},
		{"min calls too many", func() circuit.Policy { p := rateOnly(0.5); p.MinCalls = 1_000_000 + 1; return p }(), []string{"MinCalls"}},
		{"window too short", func() circuit.Policy { p := rateOnly(0.5); p.Window = 999 * time.Millisecond; return p }(), []string{"Window"}},
		{"window too long", func() circuit.Policy { p := rateOnly(0.5); p.Window = time.Hour + 1; return p }(), []string{"Window"}},
		{"window bounds", func() circuit.Policy {
			p := rateOnly(0.5)
			p.Window = time.Hour
			p.MinCalls = 1_000_000
			return p
		}(), nil},
		{"count window", calls(100, 20), nil},
		{"count window bounds", calls(10_000, 10_000), nil},
		{"count window of one", calls(1, 1), nil},
		{"count window too long", calls(10_001, 20), []string{"WindowCalls"}},
		{"count window negative", calls(-1, 20), []string{"WindowCalls"}},
		{"count window shorter than min calls", calls(10, 20), []string{"MinCalls"}},
		{"count window and time window", func() circuit.Policy { p := calls(100, 20); p.Window = time.Minute; return p }(), []string{"WindowCalls"}},
		{"count window and time window without rate", circuit.Policy{WindowCalls: 10, Window: time.Minute}, []string{"WindowCalls"}},
		{"count window without rate is inert", circuit.Policy{WindowCalls: 10, MinCalls: 20}, nil},
		{"count window without min calls", func() circuit.Policy { p := calls(100, 0); return p }(), []string{"MinCalls"}},
		{"observe only", circuit.Policy{ObserveOnly: true}, nil},
		{"slow call negative", func() circuit.Policy { p := circuit.DefaultPolicy; p.SlowCall = -1; return p }(), []string{"SlowCall"}},
		{"slow call", func() circuit.Policy { p := circuit.DefaultPolicy; p.SlowCall = time.Millisecond; return p }(), nil},
		{"max cooldown below cooldown", func() circuit.Policy { p := circuit.DefaultPolicy; p.MaxCooldown = p.Cooldown - 1; return p }(), []string{"MaxCooldown"}},
		{"max cooldown equal to cooldown", func() circuit.Policy { p := circuit.DefaultPolicy; p.MaxCooldown = p.Cooldown; return p }(), nil},
		{"max cooldown at bound", func() circuit.Policy { p := circuit.DefaultPolicy; p.MaxCooldown = (24 * time.Hour); return p }(), nil},
		{"max cooldown above bound", func() circuit.Policy { p := circuit.DefaultPolicy; p.MaxCooldown = (24 * time.Hour) + 1; return p }(), []string{"MaxCooldown"}},
		{"close after negative", func() circuit.Policy { p := circuit.DefaultPolicy; p.CloseAfter = -1; return p }(), []string{"CloseAfter"}},
		{"close after bound", func() circuit.Policy { p := circuit.DefaultPolicy; p.CloseAfter = 100; return p }(), nil},
		{"close after above bound", func() circuit.Policy { p := circuit.DefaultPolicy; p.CloseAfter = 100 + 1; return p }(), []string{"CloseAfter"}},
		{"every new field", circuit.Policy{FailureThreshold: 0, FailureRate: 2, MinCalls: 0, Window: 0, SlowCall: -1, Cooldown: time.Minute, MaxCooldown: time.Second, ProbeLease: time.Second, CloseAfter: 101},
			[]string{"FailureRate", "MinCalls", "Window", "SlowCall", "MaxCooldown", "CloseAfter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			var got []string
			var walk func(error)
			walk = func(err error) {
				var ce *circuit.ConfigError
				if errors.As(err, &ce) && ce == err {
					got = append(got, ce.Field)
					return
				}
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					for _, e := range j.Unwrap() {
						walk(e)
					}
				}
			}
			if err != nil {
				walk(err)
			}
			if len(got) != len(tt.fields) {
				t.Fatalf("Validate() fields = %v, want %v (err %v)", got, tt.fields, err)
			}
			for i := range got {
				if got[i] != tt.fields[i] {
					t.Fatalf("Validate() fields = %v, want %v", got, tt.fields)
				}
			}
			var ce *circuit.ConfigError
			if len(tt.fields) > 0 && !errors.As(err, &ce) {
				t.Fatalf("errors.As(%v, *ConfigError) = false", err)
			}
		})
	}
}

// rateOnly is a policy with only the rate rule on.
func rateOnly(r float64) circuit.Policy {
	p := circuit.DefaultPolicy
	p.FailureThreshold = 0
	p.FailureRate = r
	p.MinCalls = 20
	p.Window = time.Minute
	return p
}

// calls is rateOnly(0.5) over the last n calls, MinCalls min.
func calls(n, min int) circuit.Policy {
	p := rateOnly(0.5)
	p.Window = 0
	p.WindowCalls = n
	p.MinCalls = min
	return p
}

func withRate(p circuit.Policy, r float64) circuit.Policy {
	p.FailureRate = r
	return p
}
