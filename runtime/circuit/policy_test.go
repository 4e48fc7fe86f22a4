package circuit_test

import (
	"errors"
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
		{"threshold", circuit.Policy{FailureThreshold: 0, Cooldown: time.Second, ProbeLease: time.Second}, []string{"FailureThreshold"}},
		{"all three", circuit.Policy{FailureThreshold: 1001, Cooldown: 25 * time.Hour, ProbeLease: 0}, []string{"FailureThreshold", "Cooldown", "ProbeLease"}},
		{"zero", circuit.Policy{}, []string{"FailureThreshold", "Cooldown", "ProbeLease"}},
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
