package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrate runs migrate on stores as a deployment finds them. A database
// with no tables: state fails, saying to run migrate; after it, a circuit
// can be held open and read back; a second migrate changes nothing. A file
// or Redis store has nothing to create: migrate says it is ready.
func TestMigrate(t *testing.T) {
	t.Parallel()
	sqlite := filepath.Join(t.TempDir(), "circuits.db")
	if err := os.WriteFile(sqlite, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pg, _ := postgresSchema(t)
	for _, raw := range []string{"sqlite://" + sqlite, pg} {
		r := circuitctl(t, nil, "state", "-store", raw)
		if r.code != 1 || !strings.Contains(r.stderr, "circuitctl migrate") {
			t.Fatalf("state before migrate: exit %d, stderr %q; want 1, saying to run circuitctl migrate", r.code, r.stderr)
		}
		for range 2 {
			r = circuitctl(t, nil, "migrate", "-store", raw)
			if r.code != 0 || !strings.Contains(r.stdout, "is ready") || strings.Contains(r.stdout+r.stderr, password) {
				t.Fatalf("migrate: exit %d, stdout %q, stderr %q; want 0, ready, and no password", r.code, r.stdout, r.stderr)
			}
		}
		if r = circuitctl(t, nil, "open", "-store", raw, "-for", "1m", "-new", "-yes", "payments"); r.code != 0 {
			t.Fatalf("open after migrate: exit %d, stderr %q", r.code, r.stderr)
		}
		if r = circuitctl(t, nil, "state", "-store", raw, "payments"); r.code != 0 || !strings.Contains(r.stdout, "open (forced)") {
			t.Fatalf("state after migrate: exit %d, stdout %q, stderr %q; want payments forced open", r.code, r.stdout, r.stderr)
		}
	}
	for _, be := range []backend{{"file", setupFile}, {"redis", setupRedis}} {
		raw, _, _ := be.setup(t)
		if r := circuitctl(t, nil, "migrate", "-store", raw); r.code != 0 || !strings.Contains(r.stdout, "is ready") {
			t.Errorf("%s: migrate: exit %d, stdout %q, stderr %q; want 0 and ready", be.name, r.code, r.stdout, r.stderr)
		}
	}
	missing := "file://" + filepath.Join(t.TempDir(), "missing")
	if r := circuitctl(t, nil, "migrate", "-store", missing); r.code != 1 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("migrate of a missing directory: exit %d, stderr %q; want 1, saying it does not exist", r.code, r.stderr)
	}
	if r := circuitctl(t, nil, "migrate"); r.code != 2 || !strings.Contains(r.stderr, "no store") {
		t.Errorf("migrate with no store: exit %d, stderr %q; want 2", r.code, r.stderr)
	}
}
