package storeurl_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/storeurl"
)

func TestOpenFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, raw := range []string{"file://" + dir, "file://localhost" + dir} {
		s, err := storeurl.Open(ctx, raw)
		if err != nil {
			t.Fatalf("Open(%s): %v", raw, err)
		}
		p := circuit.Policy{FailureThreshold: 1, Cooldown: time.Minute, ProbeLease: time.Second}
		if err := circuit.New(s).Run(ctx, "billing-api", p, func(context.Context) (circuit.Outcome, error) { return circuit.Success, nil }); err != nil {
			t.Fatal(err)
		}
		if names, err := s.Names(ctx); err != nil || !slices.Equal(names, []string{"billing-api"}) {
			t.Fatalf("Names = %q, %v", names, err)
		}
		if s.String() != raw {
			t.Errorf("String = %q, want %q", s.String(), raw)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url, want string
	}{
		{"", "has no scheme"},
		{"/var/lib/circuits", "has no scheme"},
		{"ftp://host/x", `unsupported scheme "ftp"`},
		{"file:relative", "file:///absolute/path"},
		{"file://host/x", "file:///absolute/path"},
		{"file:///x?y=1", "no user, query or fragment"},
		{"file:///nonexistent/state", "state directory /nonexistent/state does not exist"},
		{"file://" + file, "is not a directory"},
		{"sqlite:///nonexistent/c.db", "database file /nonexistent/c.db does not exist"},
		{"sqlite://host/c.db", "sqlite:///absolute/path/to.db"},
		{"redis://:secret@[::1", "missing ']'"},
		{"redis://u:secret@127.0.0.1:1/0?bogus=1", "redis URL"},
		{"redis://u:secret@127.0.0.1:1/0", "u:xxxxx@127.0.0.1:1"},
		{"postgres://u:secret@127.0.0.1:1/db?connect_timeout=1", "postgres"},
	}
	for _, tt := range append(tests, passwordURLs...) {
		t.Run(tt.url, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s, err := storeurl.Open(ctx, tt.url)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open: %v; want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") || leaks(err.Error()) {
				t.Fatalf("Open: the password leaked: %v", err)
			}
		})
	}
}
