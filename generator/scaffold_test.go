package generator

import (
	"strings"
	"testing"
)

// TestScaffold checks the init scaffold: every method listed, Close left to
// pass through, and the failures a client of its kind reports proposed:
// gRPC codes for a gRPC client (a ...grpc.CallOption parameter), HTTP
// statuses otherwise.
func TestScaffold(t *testing.T) {
	tests := []struct {
		source    string
		want      []string
		forbidden []string
	}{
		{"google.golang.org/grpc/health/grpc_health_v1.HealthClient",
			[]string{"codes: [Unavailable, DeadlineExceeded, ResourceExhausted]", "      Check: {}", "      Watch: {}", "#   threshold: 5", "#   lease: 10s"},
			[]string{"statuses:", "probe_lease"}},
		{"io.ReadWriteCloser",
			[]string{"statuses: [502, 503, 504]", "      Read: {}", "# Close passes through unguarded unless listed"},
			[]string{"codes:", "      Close: {}"}},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			out, err := Scaffold("", tt.source, "circuitgen.yaml", nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("scaffold lacks %q:\n%s", w, out)
				}
			}
			for _, f := range tt.forbidden {
				if strings.Contains(string(out), f) {
					t.Errorf("scaffold holds %q:\n%s", f, out)
				}
			}
		})
	}
}
