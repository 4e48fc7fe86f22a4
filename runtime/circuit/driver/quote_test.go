package driver_test

import (
	"strings"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

func TestQuote(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"short", "billing-api", `"billing-api"`},
		{"control bytes", "a\nb", `"a\nb"`},
		{"at the bound", strings.Repeat("x", 200), `"` + strings.Repeat("x", 200) + `"`},
		{"over the bound", strings.Repeat("y", 1<<20), `"` + strings.Repeat("y", 200) + `"… (1048576 bytes)`},
	} {
		if got := driver.Quote(tt.in); got != tt.want {
			t.Errorf("%s: Quote = %.80s…, want %.80s…", tt.name, got, tt.want)
		}
	}
}
