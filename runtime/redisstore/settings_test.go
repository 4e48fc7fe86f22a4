//go:build unix

package redisstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver"
)

// TestUnsafeSettingsReported opens stores on servers with each setting
// the guarantees cannot stand (no append-only file; a policy that evicts
// any key, or the window counts' keys, which have a TTL) and with the
// recommended ones: a Breaker's Observers (ObserveEvent) hear
// one event wrapping driver.ErrUnsafe per unsafe setting, naming it, and
// none on a safe server.
func TestUnsafeSettingsReported(t *testing.T) {
	for _, tt := range []struct {
		name  string
		extra []string
		want  []string
	}{
		{"Recommended", nil, nil},
		{"NoAppendOnly", []string{"--appendonly", "no"}, []string{"appendonly is \"no\""}},
		{"AllKeysEviction", []string{"--maxmemory-policy", "allkeys-lru"}, []string{"maxmemory-policy is allkeys-lru"}},
		{"VolatileEviction", []string{"--maxmemory-policy", "volatile-lru"}, []string{"maxmemory-policy is volatile-lru"}},
		{"VolatileTTL", []string{"--maxmemory-policy", "volatile-ttl"}, []string{"maxmemory-policy is volatile-ttl"}},
		{"Both", []string{"--appendonly", "no", "--maxmemory-policy", "allkeys-random"}, []string{"appendonly", "allkeys-random"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, sock := testenv.StartRedis(t, tt.extra...)
			ev := &events{}
			circuit.New(open(t, unixClient(t, sock)), circuit.WithObserver(ev))
			ev.mu.Lock()
			defer ev.mu.Unlock()
			if len(ev.errs) != len(tt.want) {
				t.Fatalf("events %v, want %d", ev.errs, len(tt.want))
			}
			for i, err := range ev.errs {
				t.Logf("%v", err)
				if !errors.Is(err, driver.ErrUnsafe) || !strings.Contains(err.Error(), tt.want[i]) {
					t.Errorf("event %v, want ErrUnsafe naming %s", err, tt.want[i])
				}
			}
		})
	}
}
