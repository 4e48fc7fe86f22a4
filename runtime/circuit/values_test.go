package circuit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func TestValidateName(t *testing.T) {
	valid := []struct{ name, in string }{
		{"the documented example", "billing-api"},
		{"with a colon", "payment-gateway:refund"},
		{"one letter", "a"},
		{"one upper-case letter", "Z"},
		{"every allowed kind of byte", "aZ09._:-"},
		{"ends in a separator", "svc-"},
		{"128 bytes", "a" + strings.Repeat("b", 127)},
		{"128 bytes of mixed", "x" + strings.Repeat("9.:_-", 25) + "ab"},
	}
	for _, tt := range valid {
		t.Run("valid "+tt.name, func(t *testing.T) {
			if err := circuit.ValidateName(tt.in); err != nil {
				t.Errorf("ValidateName(%q) = %v, want nil", tt.in, err)
			}
		})
	}
	invalid := []struct{ name, in string }{
		{"empty", ""},
		{"129 bytes", "a" + strings.Repeat("b", 128)},
		{"far too long", strings.Repeat("a", 4096)},
		{"leading digit", "1billing"},
		{"leading hyphen", "-billing"},
		{"leading dot", ".billing"},
		{"leading underscore", "_billing"},
		{"leading colon", ":billing"},
		{"path traversal", "../etc/passwd"},
		{"dot-dot after a letter", "a/../b"},
		{"slash", "a/b"},
		{"backslash", `a\b`},
		{"NUL", "billing\x00api"},
		{"trailing NUL", "billing\x00"},
		{"space", "billing api"},
		{"trailing space", "billing "},
		{"tab", "billing\tapi"},
		{"newline", "billing\napi"},
		{"URL", "https://billing.example.test/status"},
		{"URL with credentials", "https://user:secret@billing.example.test"},
		{"query string", "billing?id=1"},
		{"percent", "billing%2F"},
		{"Cyrillic i homoglyph", "b\u0456lling"},
		{"Cyrillic a first", "\u0430pi"},
		{"accented letter", "caf\u00e9"},
		{"fullwidth letter", "\uff41pi"},
		{"zero-width space", "billing\u200bapi"},
		{"right-to-left override", "billing\u202eipa"},
		{"invalid UTF-8", "billing\xff"},
		{"at sign", "user@host"},
		{"plus", "a+b"},
		{"star", "a*"},
	}
	for _, tt := range invalid {
		t.Run("invalid "+tt.name, func(t *testing.T) {
			err := circuit.ValidateName(tt.in)
			var ce *circuit.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("ValidateName(%q) = %v, want a *ConfigError", tt.in, err)
			}
			if ce.Field != "name" {
				t.Errorf("ConfigError.Field = %q, want %q", ce.Field, "name")
			}
			if !strings.HasPrefix(err.Error(), "circuit: invalid name") {
				t.Errorf("Error() = %q, want it to start with %q", err.Error(), "circuit: invalid name")
			}
		})
	}
}

func TestValidateNameLongValueIsTruncated(t *testing.T) {
	long := "a" + strings.Repeat("b", 1<<16)
	err := circuit.ValidateName(long)
	if err == nil {
		t.Fatal("ValidateName accepted a 64 KiB name")
	}
	if len(err.Error()) > 200 {
		t.Errorf("error message is %d bytes; a long name must not be echoed whole", len(err.Error()))
	}
}

func TestKey(t *testing.T) {
	tests := []struct{ in, want string }{
		// FIPS 180-2 test vectors.
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
			"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := circuit.Key(tt.in); got != tt.want {
				t.Errorf("Key(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
	t.Run("a name never appears in its key", func(t *testing.T) {
		k := circuit.Key(testName)
		if len(k) != 64 || strings.Contains(k, testName) || strings.ToLower(k) != k {
			t.Errorf("Key(%q) = %q, want 64 lower-case hex digits", testName, k)
		}
		if circuit.Key("billing-api") == circuit.Key("Billing-api") {
			t.Error("names differing in case share a key")
		}
	})
}

func TestPolicyValidate(t *testing.T) {
	valid := circuit.Policy{FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeLease: 10 * time.Second}
	change := func(f func(*circuit.Policy)) circuit.Policy {
		p := valid
		f(&p)
		return p
	}
	tests := []struct {
		name      string
		p         circuit.Policy
		wantField string // "" when valid
	}{
		{"the documented example", valid, ""},
		{"every minimum", circuit.Policy{FailureThreshold: 1, Cooldown: time.Second, ProbeLease: time.Second}, ""},
		{"every maximum", circuit.Policy{FailureThreshold: 1000, Cooldown: 24 * time.Hour, ProbeLease: time.Hour}, ""},
		{"zero policy: DefaultPolicy", circuit.Policy{}, ""},
		{"threshold 0: the default", change(func(p *circuit.Policy) { p.FailureThreshold = 0 }), ""},
		{"threshold -1", change(func(p *circuit.Policy) { p.FailureThreshold = -1 }), "FailureThreshold"},
		{"threshold 1001", change(func(p *circuit.Policy) { p.FailureThreshold = 1001 }), "FailureThreshold"},
		{"cooldown 1s-1ns", change(func(p *circuit.Policy) { p.Cooldown = time.Second - time.Nanosecond }), "Cooldown"},
		{"cooldown 0: the default", change(func(p *circuit.Policy) { p.Cooldown = 0 }), ""},
		{"cooldown negative", change(func(p *circuit.Policy) { p.Cooldown = -time.Minute }), "Cooldown"},
		{"cooldown 24h+1ns", change(func(p *circuit.Policy) { p.Cooldown = 24*time.Hour + time.Nanosecond }), "Cooldown"},
		{"probe lease 1s-1ns", change(func(p *circuit.Policy) { p.ProbeLease = time.Second - time.Nanosecond }), "ProbeLease"},
		{"probe lease 0: the default", change(func(p *circuit.Policy) { p.ProbeLease = 0 }), ""},
		{"probe lease 1h+1ns", change(func(p *circuit.Policy) { p.ProbeLease = time.Hour + time.Nanosecond }), "ProbeLease"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *circuit.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate() = %v, want a *ConfigError", err)
			}
			if ce.Field != tt.wantField {
				t.Errorf("ConfigError.Field = %q, want %q", ce.Field, tt.wantField)
			}
		})
	}
}

func TestOutcomeString(t *testing.T) {
	tests := []struct {
		o    circuit.Outcome
		want string
	}{
		{circuit.Success, "success"},
		{circuit.Failure, "failure"},
		{circuit.Ignored, "ignored"},
		{circuit.Outcome(7), "Outcome(7)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.o.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
	if circuit.Outcome(0) != circuit.Ignored {
		t.Error("the zero Outcome must be Ignored: a forgotten classification proves nothing")
	}
}

func TestStateStringAndParse(t *testing.T) {
	tests := []struct {
		s    circuit.State
		want string
	}{
		{circuit.StateClosed, "closed"},
		{circuit.StateOpen, "open"},
		{circuit.StateHalfOpen, "half_open"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.s.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			got, err := driver.ParseState(tt.want)
			if err != nil || got != tt.s {
				t.Errorf("ParseState(%q) = %v, %v; want %v, nil", tt.want, got, err, tt.s)
			}
		})
	}
	t.Run("unknown state prints its number", func(t *testing.T) {
		if got := circuit.State(9).String(); got != "State(9)" {
			t.Errorf("State(9).String() = %q", got)
		}
	})
	for _, in := range []string{"", "Closed", "OPEN", "half-open", "halfopen", "half_open ", " closed", "State(0)", "0"} {
		t.Run("ParseState rejects "+in, func(t *testing.T) {
			if s, err := driver.ParseState(in); err == nil {
				t.Errorf("ParseState(%q) = %v, nil; want an error", in, s)
			}
		})
	}
}
