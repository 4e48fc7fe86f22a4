package generator

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestScaffoldProposes checks what the scaffold proposes counts as a
// failure for clients the method signatures alone do not place: an HTTP
// SDK whose error type holds the status in a field (statuses and
// *url.Error), a client over gRPC whose methods take options of their own
// (codes), and a package whose errors are constants of its own error type,
// as kerr's KError values are (each offered).
func TestScaffoldProposes(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
		forbidden []string
	}{
		{"sdk", `package sdk

import "context"

// APIError is the SDK's error, with the response's status.
type APIError struct {
	HTTPStatusCode int
	Message        string
}

func (e *APIError) Error() string { return e.Message }

// Item is a stored item.
type Item struct{ ID string }

// Client is the SDK's client.
type Client interface {
	Get(ctx context.Context, id string) (*Item, error)
}
`, []string{"statuses: [502, 503, 504]", `- "*net/url.Error"`, "      Get: {}"}, []string{"codes:"}},
		{"rpc", `package rpc

import (
	"context"

	"google.golang.org/grpc"
)

// Option configures a call.
type Option func(*[]grpc.CallOption)

// Client calls a gRPC service behind options of its own.
type Client interface {
	Lookup(ctx context.Context, key string, opts ...Option) (string, error)
}
`, []string{"codes: [Unavailable, DeadlineExceeded, ResourceExhausted]", "      Lookup: {}"}, []string{"statuses:"}},
		{"kerr", `package kerr

import "context"

// KError is a broker's error code.
type KError int16

func (e KError) Error() string { return "kerr" }

const (
	UnknownServerError KError = -1
	OffsetOutOfRange   KError = 1
	notExported        KError = 2
)

// Client produces records.
type Client interface {
	Produce(ctx context.Context, topic string, value []byte) error
}
`, []string{`# - "kerr.OffsetOutOfRange"`, `# - "kerr.UnknownServerError"`, `# - "kerr.KError"`, "context.DeadlineExceeded"}, []string{"notExported", "statuses:", "codes:"}},
		{"mail", `package mail

import "context"

// ConnectionError is a failure to reach the server.
type ConnectionError struct{ Addr string }

func (e *ConnectionError) Error() string { return "mail: cannot reach " + e.Addr }

// Result is a generic result, no error.
type Result[T any] struct{ V T }

type unexported struct{}

func (unexported) Error() string { return "" }

// Client sends mail.
type Client interface {
	Send(ctx context.Context, to string) error
}
`, []string{`# - "*mail.ConnectionError"`, "context.DeadlineExceeded"}, []string{"unexported", "Result", "statuses:", "codes:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := moduleTempDir(t, tt.name)
			putFile(t, filepath.Join(root, tt.name+".go"), strings.Replace(tt.src, "package "+tt.name, "package "+filepath.Base(root), 1))
			source := "github.com/circuitgen/circuitgen/generator/testdata/" + filepath.Base(root) + ".Client"
			out, err := Scaffold(root, source, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(string(out.Content), filepath.Base(root)+".", tt.name+".")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("scaffold lacks %q:\n%s", w, got)
				}
			}
			for _, f := range tt.forbidden {
				if strings.Contains(got, f) {
					t.Errorf("scaffold holds %q:\n%s", f, got)
				}
			}
		})
	}
}
