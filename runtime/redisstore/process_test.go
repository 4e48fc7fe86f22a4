package redisstore_test

import (
	"os"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/internal/storeprocess"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// envPrefix names, for the processes of TestProcesses, the key prefix of
// the store they share; envCache is "on" when they keep copies.
const (
	envPrefix = "CIRCUITGEN_TEST_REDIS_PREFIX"
	envCache  = "CIRCUITGEN_TEST_REDIS_CACHE"
)

// processConfig is the shared store, with copies or without.
func processConfig(cache string) storeprocess.ProcessConfig {
	cfg := storeprocess.ProcessConfig{
		Env: func(t *testing.T) []string {
			return []string{envPrefix + "=" + testPrefix(t, newClient(t, testenv.RedisURL(t))), envCache + "=" + cache}
		},
		Open: func(t *testing.T) circuit.Store {
			c := newClient(t, testenv.RedisURL(t))
			if os.Getenv(envCache) == "on" {
				return newCached(t, c, os.Getenv(envPrefix))
			}
			return open(t, c, redisstore.WithPrefix(os.Getenv(envPrefix)))
		},
	}
	if cache == "on" {
		// The target: an opening is seen by every other process within
		// 50 ms on loopback.
		cfg.Propagation = 200 * time.Millisecond // the target is 50 ms (BENCHMARKS.md); room for a loaded machine
	}
	return cfg
}

// TestProcesses runs storeprocess's multi-process checks, with copies and
// without: processes racing for one half-open probe, and a probe killed
// mid-call.
func TestProcesses(t *testing.T) {
	t.Run("CacheOff", func(t *testing.T) { storeprocess.Processes(t, processConfig("off")) })
	t.Run("CacheOn", func(t *testing.T) { storeprocess.Processes(t, processConfig("on")) })
}

// TestHelperProcess is the body of TestProcesses's helper processes.
func TestHelperProcess(t *testing.T) {
	storeprocess.HelperProcess(t, processConfig(os.Getenv(envCache)))
}
