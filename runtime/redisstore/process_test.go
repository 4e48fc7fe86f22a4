package redisstore_test

import (
	"os"
	"testing"

	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
	"github.com/circuitgen/circuitgen/runtime/storetest"
)

// envPrefix names, for the processes of TestProcesses, the key prefix of
// the store they share.
const envPrefix = "CIRCUITGEN_TEST_REDIS_PREFIX"

var processConfig = storetest.ProcessConfig{
	Env: func(t *testing.T) []string {
		return []string{envPrefix + "=" + testPrefix(t, newClient(t, redisURL(t)))}
	},
	Open: func(t *testing.T) circuit.Store {
		return redisstore.New(newClient(t, redisURL(t)), os.Getenv(envPrefix))
	},
}

// TestProcesses runs storetest's multi-process checks: processes racing
// for one half-open probe, and a probe killed mid-call.
func TestProcesses(t *testing.T) { storetest.Processes(t, processConfig) }

// TestHelperProcess is the body of TestProcesses's helper processes.
func TestHelperProcess(t *testing.T) { storetest.HelperProcess(t, processConfig) }
