package sqlstore_test

import (
	"os"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/internal/storeprocess"
)

// The environment that names, for the processes of TestProcesses, the
// database they share.
const (
	envBackend = "CIRCUITGEN_TEST_SQL_BACKEND" // a backend's name
	envDSN     = "CIRCUITGEN_TEST_SQL_DSN"     // its database
)

// processConfig shares a fresh database of backend b.
func processConfig(b backend) storeprocess.ProcessConfig {
	cfg := storeprocess.ProcessConfig{
		Env: func(t *testing.T) []string {
			return []string{envBackend + "=" + b.name, envDSN + "=" + b.create(t)}
		},
		Open: openShared,
	}
	if b.cached {
		cfg.Propagation = 200 * time.Millisecond // the target is 50 ms (BENCHMARKS.md); room for a loaded machine
	}
	return cfg
}

// openShared opens the database that envBackend and envDSN name.
func openShared(t *testing.T) circuit.Store {
	for _, b := range append(backends, cachedPostgres) {
		if b.name == os.Getenv(envBackend) {
			s, _ := b.openStore(t, os.Getenv(envDSN))
			return s
		}
	}
	t.Fatalf("%s=%q: no such backend", envBackend, os.Getenv(envBackend))
	return nil
}

// TestProcesses runs storeprocess's multi-process checks on every backend:
// processes racing for one half-open probe, and a probe killed mid-call.
func TestProcesses(t *testing.T) {
	for _, b := range append(backends, cachedPostgres) {
		t.Run(b.name, func(t *testing.T) { storeprocess.Processes(t, processConfig(b)) })
	}
}

// TestHelperProcess is the body of TestProcesses's helper processes.
func TestHelperProcess(t *testing.T) {
	storeprocess.HelperProcess(t, storeprocess.ProcessConfig{Open: openShared})
}
