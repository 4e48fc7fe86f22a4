package generator

import (
	"strings"
	"testing"
)

// TestScaffold checks the init scaffold: every method listed, Close left to
// pass through, and the failures a client of its kind can return proposed:
// gRPC codes for a gRPC client (a ...grpc.CallOption parameter), HTTP
// statuses and *url.Error for an HTTP-shaped one, otherwise
// context.DeadlineExceeded where methods take a context, with the
// package's exported errors offered; for a struct client, a Go file with
// an interface of its methods and the assertion that it implements it.
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
			[]string{"errors: []", `# - "io.ErrUnexpectedEOF"`, "      Read: {}", "# Close passes through unguarded unless listed"},
			[]string{"codes:", "statuses:", "      Close: {}"}},
		{"net/http.RoundTripper",
			[]string{"statuses: [502, 503, 504]", `- "*net/url.Error"`, "      RoundTrip: {}"},
			[]string{"codes:", "# - http."}},
		{"database/sql.DB",
			[]string{"package generator", "type DB interface {", "var _ DB = (*sql.DB)(nil)", "//circuitgen:guard circuit=db errors=context.DeadlineExceeded",
				"\tQueryRowContext(ctx context.Context, query string, args ...any) *sql.Row\n", "//   - sql.ErrConnDone", "\t//circuitgen:skip\n\tSetMaxOpenConns(n int)"},
			[]string{"statuses", "\t//circuitgen:skip\n\tQueryContext"}},
		{"net/http.Client",
			[]string{"type Client interface {", "var _ Client = (*http.Client)(nil)", "//circuitgen:guard circuit=client errors=*net/url.Error statuses=502-504", "\tDo(req *http.Request) (*http.Response, error)\n"},
			[]string{"http.ErrAbortHandler"}},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			scaffold, err := Scaffold("", tt.source, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			out := scaffold.Content
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
