//go:build unix

package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/circuitgen/circuitgen/internal/testenv"
	"github.com/circuitgen/circuitgen/runtime/circuit"
	"github.com/circuitgen/circuitgen/runtime/circuit/driver/drivertest"
	"github.com/circuitgen/circuitgen/runtime/redisstore"
)

// TestConformance runs the drivertest suite on a store without copies and
// on a cached one, each on a redis-server of its own: the refused-write
// check sets min-replicas-to-write on it, so that every write fails with
// NOREPLICAS while reads go on.
func TestConformance(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(map[bool]string{false: "CacheOff", true: "CacheOn"}[cached], func(t *testing.T) {
			_, sock := testenv.StartRedis(t)
			drivertest.Run(t, drivertest.Config{
				Open: func(t *testing.T) circuit.Store {
					c := unixClient(t, sock)
					if cached {
						return newCached(t, c, testPrefix(t, c))
					}
					return open(t, c, redisstore.WithPrefix(testPrefix(t, c)))
				},
				Corrupt: func(t *testing.T, s circuit.Store, name string) {
					// Another client writes: a cached store sees it once
					// the invalidation arrives.
					rs := s.(*redisstore.Store)
					if err := setField(fieldState, "ajar")(t.Context(), unixClient(t, sock), rs.Key(name)); err != nil {
						t.Fatal(err)
					}
					testenv.WaitFor(t, time.Second, "the copy is dropped", func() bool { return !rs.Cached(name) })
				},
				RefuseWrites: func(t *testing.T, _ circuit.Store) func() {
					c := unixClient(t, sock)
					if err := c.ConfigSet(t.Context(), "min-replicas-to-write", "1").Err(); err != nil {
						t.Fatal(err)
					}
					return func() {
						if err := c.ConfigSet(context.Background(), "min-replicas-to-write", "0").Err(); err != nil {
							t.Fatal(err)
						}
					}
				},
			})
		})
	}
}
