package circuit_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// nameGrammar is DESIGN.md's name rule, written independently of
// ValidateName: an ASCII letter, then ASCII letters, digits, '.', '_', ':'
// or '-', at most 128 bytes in all. Every byte it admits is ASCII, so its
// character count is the byte count.
var nameGrammar = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._:-]{0,127}$`)

func FuzzValidateName(f *testing.F) {
	for _, seed := range []string{
		"billing-api", "payment-gateway:refund", "a", "Z9", "aZ09._:-",
		"", "1abc", "-a", "../etc/passwd", "a/b", "a b", "a\x00b", "b\u0456lling",
		"https://billing.example.test/status", "caf\u00e9", "a\xff",
		"a" + strings.Repeat("b", 127), "a" + strings.Repeat("b", 128),
		"\u212a", // KELVIN SIGN, lower-cases to ASCII 'k'
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := circuit.ValidateName(name)
		want := nameGrammar.MatchString(name)
		if want && err != nil {
			t.Fatalf("ValidateName(%q) = %v; the grammar accepts it", name, err)
		}
		if !want {
			if err == nil {
				t.Fatalf("ValidateName(%q) = nil; the grammar rejects it", name)
			}
			var ce *circuit.ConfigError
			if !errors.As(err, &ce) || ce.Field != "name" {
				t.Fatalf("ValidateName(%q) = %#v, want a *ConfigError for field name", name, err)
			}
			_ = err.Error() // must not panic
		}
		if err == nil && len(name) > driver.MaxNameLen {
			t.Fatalf("accepted a %d-byte name", len(name))
		}
	})
}
